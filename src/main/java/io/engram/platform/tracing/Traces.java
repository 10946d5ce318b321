package io.engram.platform.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.ContextKey;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.MDC;

/**
 * A request's spans, for the code that runs inside it: the request's own span is current on the
 * thread serving it ({@link #serve}), and each step starts its child from there ({@link #span},
 * {@link #call}) without being handed a tracer: the request's context carries its node's. Outside
 * a request, or with tracing off, every span here is one that records nothing.
 */
public final class Traces {
  /** Why a span failed: the failure's code, as OpenTelemetry's semantic conventions name it. */
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  private static final ContextKey<Request> REQUEST = ContextKey.named("engram.request");
  private static final ContextKey<Attributes> CALL = ContextKey.named("engram.call");
  private static final TextMapPropagator W3C = W3CTraceContextPropagator.getInstance();
  private static final Tracer NONE = TracerProvider.noop().get("io.engram");

  private Traces() {}

  /** What a request holds: its node's tracer, its span's context, spans open until it ends. */
  private static final class Request {
    final Tracer tracer;
    Context context;
    Map<String, Span> untilEnd;

    Request(Tracer tracer) {
      this.tracer = tracer;
    }
  }

  /** A request being served: its span is current on this thread until {@link #close()}. */
  public static final class Served implements AutoCloseable {
    private final Request request;
    private final Span span;
    private final Scope scope;

    private Served(Request request, Span span, Scope scope) {
      this.request = request;
      this.span = span;
      this.scope = scope;
    }

    public Span span() {
      return span;
    }

    /** Ends the spans left open until the request's end, then the request's. */
    @Override
    public void close() {
      try {
        if (request.untilEnd != null) {
          request.untilEnd.values().forEach(Span::end);
        }
        span.end();
      } finally {
        scope.close();
        MDC.remove("trace_id");
        MDC.remove("span_id");
      }
    }
  }

  /**
   * Starts serving a request: its span (a child of {@code parent}, the client's trace context when
   * it sent one), current on this thread until the result is closed; its trace id in the log's
   * lines meanwhile.
   */
  public static Served serve(
      Tracer tracer, Context parent, String name, SpanKind kind, Attributes attributes) {
    Request request = new Request(tracer);
    Span span = tracer
        .spanBuilder(name)
        .setParent(parent)
        .setSpanKind(kind)
        .setAllAttributes(attributes)
        .startSpan();
    request.context = parent.with(span).with(REQUEST, request);
    SpanContext context = span.getSpanContext();
    if (context.isValid()) {
      MDC.put("trace_id", context.getTraceId());
      MDC.put("span_id", context.getSpanId());
    }
    return new Served(request, span, request.context.makeCurrent());
  }

  /** The W3C trace context a carrier (a request's headers) holds; the root context without one. */
  public static <C> Context extract(C carrier, TextMapGetter<C> getter) {
    return W3C.extract(Context.root(), carrier, getter);
  }

  /** The span of the request served on this thread; one that records nothing outside a request. */
  public static Span request() {
    Request request = Context.current().get(REQUEST);
    return request == null ? Span.getInvalid() : Span.fromContext(request.context);
  }

  /** A step of the current span (an internal span), started now; the caller ends it. */
  public static Span span(String name) {
    return builder(name).setSpanKind(SpanKind.INTERNAL).startSpan();
  }

  /**
   * A call to another service (a client span) from the current span, with the attributes that
   * whoever chose the callee set for it ({@link #callsWith}); the caller ends it.
   */
  public static Span call(String name) {
    SpanBuilder builder = builder(name).setSpanKind(SpanKind.CLIENT);
    Attributes chosen = Context.current().get(CALL);
    if (chosen != null) {
      builder.setAllAttributes(chosen);
    }
    return builder.startSpan();
  }

  /** Calls started while the result is open carry these attributes (who chose the callee, how). */
  public static Scope callsWith(Attributes attributes) {
    Context current = Context.current();
    if (!Span.fromContext(current).isRecording()) {
      return Scope.noop();
    }
    return current.with(CALL, attributes).makeCurrent();
  }

  /**
   * A step of the request that lasts until the request ends (the response, once it begins), a
   * child of the request's span wherever it starts; started once per request, the first time.
   */
  public static Span untilRequestEnds(String name) {
    Request request = Context.current().get(REQUEST);
    if (request == null) {
      return Span.getInvalid();
    }
    if (request.untilEnd == null) {
      request.untilEnd = new LinkedHashMap<>(2);
    }
    // A tool loop's steps each begin an answer: the request has one response, from the first.
    return request.untilEnd.computeIfAbsent(
        name,
        first -> request.tracer.spanBuilder(first).setParent(request.context).startSpan());
  }

  /**
   * The headers with the current span's {@code traceparent} (and {@code tracestate}) added, for a
   * call to another service; as they were when there is no trace context.
   */
  public static String[] withTraceContext(String[] headers) {
    Context current = Context.current();
    if (!Span.fromContext(current).getSpanContext().isValid()) {
      return headers;
    }
    List<String> added = new ArrayList<>(4);
    W3C.inject(current, added, (carrier, name, value) -> {
      carrier.add(name);
      carrier.add(value);
    });
    String[] all = Arrays.copyOf(headers, headers.length + added.size());
    for (int i = 0; i < added.size(); i++) {
      all[headers.length + i] = added.get(i);
    }
    return all;
  }

  /** Marks a span failed: its error type (a failure's code) and what happened. */
  public static void failed(Span span, String errorType, String description) {
    span.setAttribute(ERROR_TYPE, errorType);
    span.setStatus(StatusCode.ERROR, description == null ? errorType : description);
  }

  private static SpanBuilder builder(String name) {
    Request request = Context.current().get(REQUEST);
    return (request == null ? NONE : request.tracer).spanBuilder(name);
  }
}
