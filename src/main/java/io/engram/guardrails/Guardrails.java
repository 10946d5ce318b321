package io.engram.guardrails;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
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

  /** The response header that tells which guardrails fired on the request. */
  public static final String HEADER = "X-Engram-Guardrails";

  /**
   * Where the request this thread serves hears what fired on its memory writes (its response's
   * header): set around each HTTP request ({@link GuardrailRoutes}), absent on background work.
   */
  private static final ThreadLocal<java.util.function.Consumer<List<Screening.Firing>>> TOLD =
      new ThreadLocal<>();

  static void tellTo(java.util.function.Consumer<List<Screening.Firing>> teller) {
    if (teller == null) {
      TOLD.remove();
    } else {
      TOLD.set(teller);
    }
  }

  /** Who a screened request is: covered by a guardrail's scope or not. */
  public record Who(String credentialId, boolean apiKey, String assistantId, String model) {
    /** A request with no model (a memory write). */
    public static Who writing(String credentialId, boolean apiKey) {
      return new Who(credentialId, apiKey, null, null);
    }
  }

  /**
   * Where an organization hears that its guardrails block: {@code blocked} fires its
   * guardrail_blocked alert (the message names the guardrail), {@code cleared} resolves it.
   */
  public interface BlockAlerts {
    BlockAlerts NONE = new BlockAlerts() {
      @Override
      public void blocked(String orgId, String message) {}

      @Override
      public void cleared(String orgId) {}
    };

    void blocked(String orgId, String message);

    void cleared(String orgId);
  }

  /** A guardrail's block is told at most this often; the alert clears this long after the last. */
  static final Duration ALERT_EVERY = Duration.ofHours(1);

  private final GuardrailStore store;
  private final MeterRegistry registry;
  private final Clock clock;
  private volatile Map<String, List<Guardrail>> byOrganization = Map.of();
  private volatile GuardrailStore.Version seen;
  private volatile BlockAlerts alerts = BlockAlerts.NONE;
  /** When each guardrail's block was last told (this node's). */
  private final Map<String, Long> toldAt = new ConcurrentHashMap<>();
  /** Each organization's last block, while its alert is firing. */
  private final Map<String, Long> lastBlock = new ConcurrentHashMap<>();
  /** Blocks to tell, off the request's thread (the alert is a write): told by {@link #follow}. */
  private final Queue<Screening.Firing> toTell = new ConcurrentLinkedQueue<>();

  private final Webhooks webhooks;

  Guardrails(GuardrailStore store, Webhooks webhooks, MeterRegistry registry, Clock clock) {
    this.store = store;
    this.webhooks = webhooks;
    this.registry = registry;
    this.clock = clock;
    reload();
  }

  /** Tells the organization's guardrail_blocked alerts to {@code alerts}. */
  public void alertTo(BlockAlerts alerts) {
    this.alerts = alerts;
  }

  /** The guardrails of the phase that cover {@code who} run over {@code texts}. */
  public Screening screen(String orgId, Phase phase, Who who, List<Screening.Text> texts) {
    return screen(orgId, phase, who, texts, new Placeholders());
  }

  /** As {@link #screen}, with the conversation's placeholders (numbered across its texts). */
  public Screening screen(
      String orgId, Phase phase, Who who, List<Screening.Text> texts, Placeholders placeholders) {
    List<Guardrail> covering = covering(orgId, phase, who);
    if (covering.isEmpty()) {
      return new Screening(texts.stream().map(Screening.Text::text).toList(), List.of(), null);
    }
    Screening screened = Screening.of(phase, covering, texts, placeholders);
    screened.firings().forEach(this::count);
    return screened;
  }

  /**
   * The output guardrails covering {@code who}, over an answer as it comes; null when none does.
   * Redactions take their placeholders from the conversation's.
   */
  public AnswerScreen answer(String orgId, Who who, Placeholders placeholders) {
    List<Guardrail> covering = covering(orgId, Phase.OUTPUT, who);
    return covering.isEmpty() ? null : new AnswerScreen(covering, placeholders, this::count);
  }

  private List<Guardrail> covering(String orgId, Phase phase, Who who) {
    return byOrganization.getOrDefault(orgId, List.of()).stream()
        .filter(g -> g.enabled() && g.appliesTo().contains(phase))
        .filter(
            g -> g.scope().covers(who.credentialId(), who.apiKey(), who.assistantId(), who.model()))
        .toList();
  }

  /** A firing in the metric; a block told as the organization's alert (at most hourly). */
  private void count(Screening.Firing firing) {
    Counter.builder("engram_guardrail_total")
        .description("Guardrails that fired, by guardrail, phase and action")
        .tag("guardrail", firing.guardrail().id())
        .tag("phase", firing.phase().id())
        .tag("action", firing.action().id())
        .register(registry)
        .increment();
    if (firing.action() == Action.BLOCK) {
      long now = clock.millis();
      lastBlock.put(firing.guardrail().orgId(), now);
      Long told = toldAt.get(firing.guardrail().id());
      if (told == null || now - told >= ALERT_EVERY.toMillis()) {
        toldAt.put(firing.guardrail().id(), now);
        toTell.add(firing);
      }
    }
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
    java.util.function.Consumer<List<Screening.Firing>> teller = TOLD.get();
    if (teller != null && screened.fired()) {
      teller.accept(screened.firings());
    }
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

  /** What one phase's guardrails made of a previewed text. */
  public record Preview(Phase phase, Screening screening) {}

  /**
   * What the organization's enabled guardrails of {@code only} (every phase when empty) would make
   * of {@code text}, whoever sends it (scopes aside); nothing is counted or told. The text is read
   * as not the user's own, so injection checks run on it too.
   */
  List<Preview> preview(String orgId, java.util.Optional<Phase> only, String text) {
    List<Preview> previews = new java.util.ArrayList<>();
    for (Phase phase : Phase.values()) {
      if (only.isPresent() && only.get() != phase) {
        continue;
      }
      List<Guardrail> covering = byOrganization.getOrDefault(orgId, List.of()).stream()
          .filter(g -> g.enabled() && g.appliesTo().contains(phase))
          .toList();
      if (!covering.isEmpty()) {
        previews.add(new Preview(
            phase,
            Screening.of(
                phase, covering, List.of(new Screening.Text(text, false)), new Placeholders())));
      }
    }
    return previews;
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
    reachable(orgId, spec);
    long now = clock.millis();
    Guardrail created = Guardrail.of(Ids.newId("grd", now), orgId, spec, now, now, webhooks);
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
    GuardrailSpec spec = GuardrailSpec.parse(merged);
    reachable(orgId, spec);
    Guardrail updated = Guardrail.of(
        id,
        orgId,
        spec,
        current.createdAt(),
        Math.max(clock.millis(), current.updatedAt() + 1),
        webhooks);
    if (!store.update(updated)) {
      throw notFound(id);
    }
    reload();
    return updated;
  }

  /** A webhook's URL must be one the organization's outbound rules let it reach: 400 otherwise. */
  private void reachable(String orgId, GuardrailSpec spec) {
    if (spec.check() instanceof Check.Webhook webhook) {
      try {
        webhooks.admit(orgId, webhook.url());
      } catch (io.engram.platform.net.OutboundBlocked e) {
        throw ApiException.badRequest(
            "check.url",
            "'check.url' is outside the organization's outbound rules: " + e.getMessage());
      }
    }
  }

  void delete(String orgId, String id) {
    if (!store.delete(orgId, id)) {
      throw notFound(id);
    }
    reload();
  }

  /**
   * Reads the guardrails again when any node changed one since the last look (every second);
   * tells the blocks since, and clears the alert of an organization an hour past its last block.
   */
  void follow() {
    if (!store.version().equals(seen)) {
      reload();
    }
    for (Screening.Firing firing = toTell.poll(); firing != null; firing = toTell.poll()) {
      Guardrail guardrail = firing.guardrail();
      alerts.blocked(
          guardrail.orgId(),
          "The guardrail " + guardrail.id() + " ('" + guardrail.name() + "') blocked "
              + switch (firing.phase()) {
                case INPUT -> "a request's input";
                case OUTPUT -> "a model's answer";
                case MEMORY_WRITE -> "a memory write";
                case MEMORY_INJECTION -> "a memory from a chat";
              }
              + " (" + String.join(", ", firing.kinds()) + "); told at most once an hour");
    }
    long now = clock.millis();
    lastBlock.forEach((orgId, at) -> {
      if (now - at >= ALERT_EVERY.toMillis() && lastBlock.remove(orgId, at)) {
        alerts.cleared(orgId);
      }
    });
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
