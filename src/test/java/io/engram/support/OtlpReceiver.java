package io.engram.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.zip.GZIPInputStream;

/**
 * A collector's OTLP/HTTP traces endpoint ({@code POST /v1/traces}, protobuf, gzip or not): each
 * export decoded as the real {@code ExportTraceServiceRequest} and its spans kept with their
 * resource's attributes. It can be made to hang (a collector that accepts and never answers).
 */
public final class OtlpReceiver implements AutoCloseable {
  /** A received span, with its resource's attributes, ids in hex. */
  public record Received(Span span, Map<String, String> resource) {
    public String name() {
      return span.getName();
    }

    public String traceId() {
      return HexFormat.of().formatHex(span.getTraceId().toByteArray());
    }

    public String spanId() {
      return HexFormat.of().formatHex(span.getSpanId().toByteArray());
    }

    public String parentId() {
      return HexFormat.of().formatHex(span.getParentSpanId().toByteArray());
    }

    /** An attribute's value as text (arrays as comma-separated), if the span has it. */
    public Optional<String> attribute(String key) {
      return span.getAttributesList().stream()
          .filter(kv -> kv.getKey().equals(key))
          .findFirst()
          .map(kv -> text(kv.getValue()));
    }

    public String attributeOrEmpty(String key) {
      return attribute(key).orElse("");
    }
  }

  private final HttpServer server;
  private final List<Received> spans = new CopyOnWriteArrayList<>();
  private final List<String> encodings = new CopyOnWriteArrayList<>();
  private volatile CountDownLatch hang;

  public OtlpReceiver() {
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/v1/traces", this::export);
    server.start();
  }

  /** The endpoint as OTEL_EXPORTER_OTLP_ENDPOINT takes it (the exporter adds /v1/traces). */
  public String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** From now on every export waits, unanswered, until {@link #answerAgain()}. */
  public void hang() {
    hang = new CountDownLatch(1);
  }

  public void answerAgain() {
    CountDownLatch held = hang;
    hang = null;
    if (held != null) {
      held.countDown();
    }
  }

  private void export(HttpExchange exchange) throws IOException {
    try (exchange) {
      CountDownLatch held = hang;
      if (held != null) {
        try {
          held.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      String encoding = exchange.getRequestHeaders().getFirst("Content-Encoding");
      encodings.add(encoding == null ? "identity" : encoding);
      InputStream body = "gzip".equals(encoding)
          ? new GZIPInputStream(exchange.getRequestBody())
          : exchange.getRequestBody();
      ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body);
      for (ResourceSpans resource : request.getResourceSpansList()) {
        Map<String, String> attributes = resource.getResource().getAttributesList().stream()
            .collect(Collectors.toMap(KeyValue::getKey, kv -> text(kv.getValue()), (a, b) -> b));
        for (ScopeSpans scope : resource.getScopeSpansList()) {
          scope.getSpansList().forEach(span -> spans.add(new Received(span, attributes)));
        }
      }
      byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
      exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
      exchange.sendResponseHeaders(200, answer.length);
      exchange.getResponseBody().write(answer);
    }
  }

  public List<Received> spans() {
    return List.copyOf(spans);
  }

  /** The Content-Encoding of each export received. */
  public List<String> encodings() {
    return List.copyOf(encodings);
  }

  /** Waits (up to 20 s) until a span matches, and returns it. */
  public Received await(Predicate<Received> matching) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      for (Received span : spans) {
        if (matching.test(span)) {
          return span;
        }
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    throw new AssertionError("no span matched within 20 s; received: "
        + spans.stream().map(Received::name).toList());
  }

  /** The spans of one trace, once its span named {@code last} arrived. */
  public List<Received> trace(String traceId, String last) {
    await(span -> span.traceId().equals(traceId) && span.name().equals(last));
    return spans.stream().filter(span -> span.traceId().equals(traceId)).toList();
  }

  private static String text(AnyValue value) {
    return switch (value.getValueCase()) {
      case STRING_VALUE -> value.getStringValue();
      case BOOL_VALUE -> String.valueOf(value.getBoolValue());
      case INT_VALUE -> String.valueOf(value.getIntValue());
      case DOUBLE_VALUE -> String.valueOf(value.getDoubleValue());
      case ARRAY_VALUE ->
        value.getArrayValue().getValuesList().stream()
            .map(OtlpReceiver::text)
            .collect(Collectors.joining(","));
      default -> value.toString();
    };
  }

  @Override
  public void close() {
    answerAgain();
    server.stop(0);
  }
}
