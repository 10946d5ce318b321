package io.engram.settings;

import io.engram.organizations.Limit;
import io.engram.organizations.PlanLimits;
import java.util.Arrays;
import java.util.Optional;

/**
 * The fields of an organization's configuration ({@code PATCH /config}), each with its group, its
 * kind, its unit and where its default and bounds come from. Numeric fields take integers; times
 * are seconds. A field whose ceiling is the plan's may be lowered below the plan's value and raised
 * back up to it, never above; where the plan is unlimited there is no ceiling.
 */
public enum ConfigField {
  MAX_CONCURRENT_REQUESTS("quotas", "max_concurrent_requests", Kind.COUNT, "requests"),
  MAX_TOKENS_PER_REQUEST("quotas", "max_tokens_per_request", Kind.COUNT, "tokens"),
  /**
   * Whether a max_tokens above max_tokens_per_request is lowered to it (said in a response header)
   * instead of refused, on the OpenAI-style routes (off: a 400, as OpenAI refuses it).
   */
  CLAMP_MAX_TOKENS("quotas", "clamp_max_tokens", Kind.SWITCH, null),
  /**
   * The same on /v1/messages, on by default: Anthropic's clients must send max_tokens and send
   * their own default (4,096 for the AI SDK), which a smaller quota would refuse on every call.
   */
  CLAMP_MESSAGES_MAX_TOKENS("quotas", "clamp_messages_max_tokens", Kind.SWITCH, null),
  ALLOWED_IPS("network", "allowed_ips", Kind.CIDR_LIST, "IPv4 CIDR"),
  MAX_CONNECTIONS("network", "max_connections", Kind.COUNT, "connections"),
  CONNECTION_TIMEOUT("network", "connection_timeout", Kind.SECONDS, "seconds"),
  KEEPALIVE_TIMEOUT("network", "keepalive_timeout", Kind.SECONDS, "seconds"),
  WEBSOCKET_ENABLED("websocket", "enabled", Kind.SWITCH, null),
  WEBSOCKET_MAX_CONNECTIONS("websocket", "max_connections", Kind.COUNT, "connections"),
  WEBSOCKET_IDLE_TIMEOUT("websocket", "idle_timeout", Kind.SECONDS, "seconds"),
  /** The most tokens of memory put in a chat's prompt, unless the request asks for other. */
  MEMORY_CONTEXT_TOKENS("memory", "context_tokens", Kind.COUNT, "tokens"),
  /** The score the best memory must reach for a chat to get a memory block at all. */
  MEMORY_RELEVANCE_FLOOR("memory", "relevance_floor", Kind.SHARE, "score"),
  /** Whether repeated requests are answered from the response cache (off by default). */
  CACHE_ENABLED("cache", "enabled", Kind.SWITCH, null),
  /** How long an answer stays in the response cache. */
  CACHE_TTL_SECONDS("cache", "ttl_seconds", Kind.SECONDS, "seconds"),
  /** Whether the request log keeps each request's messages and answer (sealed; off by default). */
  REQUEST_LOG_CONTENTS("request_log", "contents", Kind.SWITCH, null),
  /** Whether the request's spans carry its messages and answer to the traces' collector (off). */
  TRACES_CONTENTS("traces", "contents", Kind.SWITCH, null);

  public enum Kind {
    COUNT,
    SECONDS,
    SWITCH,
    CIDR_LIST,
    /** A number from 0 to 1. */
    SHARE
  }

  /**
   * The memory block's default size: 1,024 tokens, or half a request's tokens on plans whose
   * requests are smaller (Free: 512), so the memory never takes most of a request.
   */
  static final long CONTEXT_TOKENS = 1_024;
  /** The largest memory block a chat may ask for (the memory API's maxContextTokens bound). */
  static final long MAX_CONTEXT_TOKENS = 16_000;
  /**
   * The default relevance floor, chosen on the memory development sets with one set left out
   * (docs/benchmarks.md, "The chat's memory block").
   */
  public static final double RELEVANCE_FLOOR = 0.55;

  /** An answer's default and longest life in the response cache: an hour, thirty days. */
  static final long CACHE_TTL = 3_600;

  static final long MAX_CACHE_TTL = 30L * 86_400;

  /** Where a field's effective value comes from, lowest layer first. */
  public enum Source {
    SYSTEM,
    PLAN,
    ORGANIZATION,
    INSTANCE,
    RUNTIME;

    public String wireName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * A field's default (and its layer) and its bounds for one organization. {@code max} null: no
   * ceiling. A null default of a count means unlimited.
   */
  public record Bounds(Object defaultValue, Source defaultSource, long min, Long max) {}

  /** At most this many allowlist entries (the spec's limit). */
  public static final int MAX_ALLOWED_IPS = 100;

  private final String group;
  private final String field;
  private final Kind kind;
  private final String unit;

  ConfigField(String group, String field, Kind kind, String unit) {
    this.group = group;
    this.field = field;
    this.kind = kind;
    this.unit = unit;
  }

  public String group() {
    return group;
  }

  public String field() {
    return field;
  }

  /** The dotted name errors and the GET's details use, such as {@code quotas.max_tokens_per_request}. */
  public String path() {
    return group + "." + field;
  }

  public Kind kind() {
    return kind;
  }

  public String unit() {
    return unit;
  }

  public static Optional<ConfigField> of(String group, String field) {
    return Arrays.stream(values())
        .filter(f -> f.group.equals(group) && f.field.equals(field))
        .findFirst();
  }

  public static boolean isGroup(String group) {
    return Arrays.stream(values()).anyMatch(f -> f.group.equals(group));
  }

  /** The field's default and bounds on the given plan and server. */
  public Bounds bounds(PlanLimits plan, SystemDefaults system) {
    return switch (this) {
      case MAX_CONCURRENT_REQUESTS -> planCeiling(plan.concurrentRequests());
      case MAX_TOKENS_PER_REQUEST -> planCeiling(plan.tokensPerRequest());
      case MAX_CONNECTIONS -> planCeiling(plan.connections());
      case WEBSOCKET_MAX_CONNECTIONS -> planCeiling(plan.webSocketConnections());
      case ALLOWED_IPS -> new Bounds(java.util.List.of(), Source.SYSTEM, 0, (long) MAX_ALLOWED_IPS);
      case CONNECTION_TIMEOUT ->
        new Bounds((long) system.connectionTimeoutSeconds(), Source.SYSTEM, 1, 300L);
      case KEEPALIVE_TIMEOUT ->
        new Bounds((long) system.keepAliveSeconds(), Source.SYSTEM, 1, 600L);
      case WEBSOCKET_ENABLED -> new Bounds(system.webSocketsEnabled(), Source.SYSTEM, 0, null);
      case WEBSOCKET_IDLE_TIMEOUT ->
        new Bounds((long) system.webSocketIdleSeconds(), Source.SYSTEM, 1, 3600L);
      case MEMORY_CONTEXT_TOKENS ->
        new Bounds(
            plan.tokensPerRequest().isUnlimited()
                ? CONTEXT_TOKENS
                : Math.min(CONTEXT_TOKENS, plan.tokensPerRequest().value() / 2),
            Source.PLAN,
            64,
            MAX_CONTEXT_TOKENS);
      case MEMORY_RELEVANCE_FLOOR -> new Bounds(RELEVANCE_FLOOR, Source.SYSTEM, 0, 1L);
      case CACHE_ENABLED, REQUEST_LOG_CONTENTS, TRACES_CONTENTS, CLAMP_MAX_TOKENS ->
        new Bounds(false, Source.SYSTEM, 0, null);
      case CLAMP_MESSAGES_MAX_TOKENS -> new Bounds(true, Source.SYSTEM, 0, null);
      case CACHE_TTL_SECONDS -> new Bounds(CACHE_TTL, Source.SYSTEM, 1, MAX_CACHE_TTL);
    };
  }

  private static Bounds planCeiling(Limit limit) {
    Long value = limit.isUnlimited() ? null : limit.value();
    return new Bounds(value, Source.PLAN, 1, value);
  }
}
