package io.engram.guardrails;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * An organization's guardrails: written through the store, kept in memory on every node (read
 * again within a second of any node's change, as budgets are), and run where text flows: {@link
 * #screen} gives what a phase's guardrails covering a request make of its texts, and counts every
 * firing in {@code engram_guardrail_total{guardrail,phase,action}}.
 */
public final class Guardrails {
  /** The most guardrails one organization may have. */
  static final int MOST = 100;

  /** Who a screened request is: covered by a guardrail's scope or not. */
  public record Who(String credentialId, boolean apiKey, String assistantId, String model) {
    /** A request with no model (a memory write). */
    public static Who writing(String credentialId, boolean apiKey) {
      return new Who(credentialId, apiKey, null, null);
    }
  }

  private final GuardrailStore store;
  private final MeterRegistry registry;
  private final Clock clock;
  private volatile Map<String, List<Guardrail>> byOrganization = Map.of();
  private volatile GuardrailStore.Version seen;

  Guardrails(GuardrailStore store, MeterRegistry registry, Clock clock) {
    this.store = store;
    this.registry = registry;
    this.clock = clock;
    reload();
  }

  /** The guardrails of the phase that cover {@code who} run over {@code texts}. */
  public Screening screen(String orgId, Phase phase, Who who, List<Screening.Text> texts) {
    List<Guardrail> covering = byOrganization.getOrDefault(orgId, List.of()).stream()
        .filter(g -> g.enabled() && g.appliesTo().contains(phase))
        .filter(
            g -> g.scope().covers(who.credentialId(), who.apiKey(), who.assistantId(), who.model()))
        .toList();
    if (covering.isEmpty()) {
      return new Screening(texts.stream().map(Screening.Text::text).toList(), List.of(), null);
    }
    Screening screened = Screening.of(phase, covering, texts);
    for (Screening.Firing firing : screened.firings()) {
      Counter.builder("engram_guardrail_total")
          .description("Guardrails that fired, by guardrail, phase and action")
          .tag("guardrail", firing.guardrail().id())
          .tag("phase", phase.id())
          .tag("action", firing.action().id())
          .register(registry)
          .increment();
    }
    return screened;
  }

  /**
   * A memory's text as the organization's memory_write guardrails let it be stored: redacted
   * where one redacts; a block is a 400 naming the guardrail, and nothing is stored.
   */
  public String memoryWrite(Principal caller, String text) {
    if (caller.organization() == null || !any(caller.orgId(), Phase.MEMORY_WRITE)) {
      return text;
    }
    Screening screened = screen(
        caller.orgId(),
        Phase.MEMORY_WRITE,
        Who.writing(caller.credentialId(), caller.kind() == Principal.Kind.API_KEY),
        List.of(new Screening.Text(text, false)));
    if (screened.blocked()) {
      throw blocked(screened.blockedBy());
    }
    return screened.texts().get(0);
  }

  /**
   * The refusal of what a guardrail blocked: 400 {@code guardrail_blocked} naming the guardrail
   * and the kinds it found, never the text.
   */
  public static ApiException blocked(Screening.Firing firing) {
    Guardrail guardrail = firing.guardrail();
    return ApiException.invalid(
        "guardrail_blocked",
        null,
        "The guardrail " + guardrail.id() + " ('" + guardrail.name() + "') blocked this "
            + switch (firing.phase()) {
              case INPUT -> "request's input";
              case OUTPUT -> "answer";
              case MEMORY_WRITE -> "memory";
              case MEMORY_INJECTION -> "memory's injection";
            }
            + ": it found " + String.join(", ", firing.kinds()));
  }

  /** Whether the organization has a guardrail of the phase that is on (a cheap test first). */
  public boolean any(String orgId, Phase phase) {
    return byOrganization.getOrDefault(orgId, List.of()).stream()
        .anyMatch(g -> g.enabled() && g.appliesTo().contains(phase));
  }

  public List<Guardrail> list(String orgId) {
    return byOrganization.getOrDefault(orgId, List.of());
  }

  public Guardrail get(String orgId, String id) {
    return store.get(orgId, id).orElseThrow(() -> notFound(id));
  }

  Guardrail create(String orgId, GuardrailSpec spec) {
    if (store.count(orgId) >= MOST) {
      throw ApiException.invalid(
          "too_many_guardrails",
          null,
          "An organization has at most " + MOST + " guardrails; delete one first");
    }
    long now = clock.millis();
    Guardrail created = Guardrail.of(Ids.newId("grd", now), orgId, spec, now, now);
    store.insert(created);
    reload();
    return created;
  }

  /** The stored guardrail with {@code patch} merged in (RFC 7396), checked again as a whole. */
  Guardrail update(String orgId, String id, ObjectNode patch) {
    Guardrail current = get(orgId, id);
    ObjectNode merged = GuardrailViews.spec(current.spec());
    patch.properties().forEach(field -> {
      if (field.getValue().isNull()) {
        merged.remove(field.getKey());
      } else {
        merged.set(field.getKey(), field.getValue());
      }
    });
    Guardrail updated = Guardrail.of(
        id,
        orgId,
        GuardrailSpec.parse(merged),
        current.createdAt(),
        Math.max(clock.millis(), current.updatedAt() + 1));
    if (!store.update(updated)) {
      throw notFound(id);
    }
    reload();
    return updated;
  }

  void delete(String orgId, String id) {
    if (!store.delete(orgId, id)) {
      throw notFound(id);
    }
    reload();
  }

  /** Reads the guardrails again when any node changed one since the last look (every second). */
  void follow() {
    if (!store.version().equals(seen)) {
      reload();
    }
  }

  private synchronized void reload() {
    GuardrailStore.Version version = store.version();
    byOrganization = store.all().stream()
        .collect(Collectors.groupingBy(Guardrail::orgId, Collectors.toUnmodifiableList()));
    seen = version;
  }

  private static ApiException notFound(String id) {
    return ApiException.notFound("guardrail_not_found", "guardrail_id", "No guardrail " + id);
  }
}
