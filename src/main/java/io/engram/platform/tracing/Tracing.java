package io.engram.platform.tracing;

import io.engram.platform.config.TracingSettings;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanLimits;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.concurrent.TimeUnit;

/**
 * The node's traces: the OpenTelemetry SDK's tracer provider exporting over OTLP/HTTP when the
 * operator set an endpoint, else a tracer that records nothing (a client's {@code traceparent}
 * is still handed on to the providers). One per server; it is handed to whatever starts a request's
 * span (the HTTP filter, the WebSocket chats), and what runs inside a request finds it through the
 * request's context ({@link Traces}).
 */
public final class Tracing implements AutoCloseable {
  private static final String SCOPE = "io.engram";

  private final TracingSettings settings;
  private final SdkTracerProvider provider;
  private final Tracer tracer;

  private Tracing(TracingSettings settings, SdkTracerProvider provider) {
    this.settings = settings;
    this.provider = provider;
    this.tracer = provider == null
        ? TracerProvider.noop().get(SCOPE)
        : provider.get(SCOPE, Tracing.class.getPackage().getImplementationVersion());
  }

  /** Tracing as the settings say; {@code nodeId} is the resource's {@code service.instance.id}. */
  public static Tracing start(TracingSettings settings, MeterRegistry registry, String nodeId) {
    if (!settings.exports()) {
      return new Tracing(settings, null);
    }
    SdkLogs.install();
    OtlpHttpSpanExporterBuilder exporter = OtlpHttpSpanExporter.builder()
        .setEndpoint(settings.endpoint())
        .setTimeout(settings.timeout())
        .setCompression(settings.compression());
    settings.headers().forEach(exporter::addHeader);
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setResource(resource(settings, nodeId))
        .setSampler(sampler(settings))
        .setSpanLimits(SpanLimits.builder()
            .setMaxAttributeValueLength(settings.maxValueLength())
            .build())
        .addSpanProcessor(new SpanQueue(
            exporter.build(),
            settings.maxQueueSize(),
            settings.maxBatchSize(),
            settings.scheduleDelay(),
            settings.exportTimeout(),
            registry))
        .build();
    return new Tracing(settings, provider);
  }

  /** Whether spans are recorded and sent (an endpoint is set). */
  public boolean exports() {
    return provider != null;
  }

  public Tracer tracer() {
    return tracer;
  }

  /** What the start-up log says of traces. */
  @Override
  public String toString() {
    return settings.toString();
  }

  private static Resource resource(TracingSettings settings, String nodeId) {
    AttributesBuilder attributes = Attributes.builder();
    settings.resourceAttributes().forEach(attributes::put);
    attributes.put("service.name", settings.serviceName());
    attributes.put("service.instance.id", nodeId);
    String version = Tracing.class.getPackage().getImplementationVersion();
    if (version != null) {
      attributes.put("service.version", version);
    }
    return Resource.getDefault().merge(Resource.create(attributes.build()));
  }

  private static Sampler sampler(TracingSettings settings) {
    Sampler ratio = Sampler.traceIdRatioBased(settings.samplerRatio());
    return switch (settings.sampler()) {
      case "always_on" -> Sampler.alwaysOn();
      case "always_off" -> Sampler.alwaysOff();
      case "traceidratio" -> ratio;
      case "parentbased_always_off" -> Sampler.parentBased(Sampler.alwaysOff());
      case "parentbased_traceidratio" -> Sampler.parentBased(ratio);
      default -> Sampler.parentBased(Sampler.alwaysOn());
    };
  }

  /** Exports what is still queued (at most the export timeout), then stops. */
  @Override
  public void close() {
    if (provider != null) {
      provider.shutdown().join(settings.exportTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS);
    }
  }
}
