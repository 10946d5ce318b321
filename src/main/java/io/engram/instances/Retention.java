package io.engram.instances;

import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import io.engram.store.Rows;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Retention: an organization's policies, stored, and applied to its data classes. For each policy
 * the items of its class that it governs (conversation exchanges; LoRA adapters, each a folder or
 * file under {@code lora_adapters/}; files of {@code results/} and {@code data/} matching its
 * pattern) are ordered newest first; the {@code keep_latest} newest are kept, and so is anything
 * younger than {@code min_age_days}; of the rest, what is older than {@code max_age_days} goes,
 * and then the oldest go until the governed items fit in {@code max_size_gb}. A dry run reports
 * exactly what a run would delete; a run deletes it, each deletion in the instance's storage log.
 */
public final class Retention {
  /** One thing a policy may delete: an exchange, an adapter (all its files) or a file. */
  record Item(
      DataClass type, String instanceId, String name, Instant at, long bytes, List<String> paths) {}

  /** What a run did (or, dry, would do): each deletion with its reason. */
  public record Outcome(
      String item, String instanceId, DataClass type, long bytes, String reason) {}

  private final Database db;
  private final FileStore files;
  private final ConversationHistory history;
  private final StorageLog log;
  private final Clock clock;
  private final MeterRegistry registry;

  public Retention(
      Database db,
      FileStore files,
      ConversationHistory history,
      StorageLog log,
      MeterRegistry registry,
      Clock clock) {
    this.registry = registry;
    this.db = db;
    this.files = files;
    this.history = history;
    this.log = log;
    this.clock = clock;
  }

  /** Replaces the organization's policies (all checked before). */
  public void set(String orgId, List<RetentionPolicy> policies, String by) {
    String json = Json.write(policies.stream().map(RetentionPolicy::toView).toList());
    long now = clock.millis();
    db.write(h -> h.createUpdate("""
            INSERT INTO retention_policies (org_id, policies, updated_at, updated_by)
            VALUES (:org, :policies, :now, :by)
            ON CONFLICT (org_id) DO UPDATE SET policies = excluded.policies,
              updated_at = excluded.updated_at, updated_by = excluded.updated_by""")
        .bind("org", orgId)
        .bind("policies", json)
        .bind("now", now)
        .bind("by", by)
        .execute());
  }

  public List<RetentionPolicy> policies(String orgId) {
    return db.read(h -> h.createQuery("SELECT policies FROM retention_policies WHERE org_id = :org")
            .bind("org", orgId)
            .mapTo(String.class)
            .findOne())
        .map(json -> RetentionPolicy.parseAll(
            Json.read(json, com.fasterxml.jackson.databind.JsonNode.class)))
        .orElse(List.of());
  }

  /** When the policies last ran, if ever. */
  public Optional<Instant> lastRun(String orgId) {
    return db.read(
        h -> h.createQuery("SELECT last_run_at FROM retention_policies WHERE org_id = :org")
            .bind("org", orgId)
            .map((rs, ctx) -> Rows.nullableInstant(rs, "last_run_at"))
            .findOne()
            .flatMap(Optional::ofNullable));
  }

  /** Organizations that have policies (the scheduled job runs them). */
  public List<String> governed() {
    return db.read(h -> h.createQuery("SELECT org_id FROM retention_policies")
        .mapTo(String.class)
        .list());
  }

  /** Applies the organization's policies; with {@code dryRun}, only tells what would go. */
  public List<Outcome> run(Organization org, boolean dryRun, String actor, String requestId) {
    List<RetentionPolicy> policies = policies(org.id());
    Instant now = clock.instant();
    List<Outcome> outcomes = new ArrayList<>();
    Set<String> chosen = new HashSet<>();
    for (RetentionPolicy policy : policies) {
      for (Map.Entry<Item, String> doomed :
          select(policy, items(org.id(), policy), now).entrySet()) {
        Item item = doomed.getKey();
        if (chosen.add(item.type() + "/" + item.instanceId() + "/" + item.name())) {
          outcomes.add(new Outcome(
              item.name(), item.instanceId(), item.type(), item.bytes(), doomed.getValue()));
          if (!dryRun) {
            delete(org, item, actor, requestId);
            Counter.builder("engram.retention.deleted")
                .description("Items retention policies deleted, by data class")
                .tag("type", item.type().wireName())
                .register(registry)
                .increment();
          }
        }
      }
    }
    if (!dryRun) {
      db.write(h -> h.createUpdate(
              "UPDATE retention_policies SET last_run_at = :now WHERE org_id = :org")
          .bind("now", now.toEpochMilli())
          .bind("org", org.id())
          .execute());
    }
    return outcomes;
  }

  /** The items to delete under one policy, each with why. */
  static Map<Item, String> select(RetentionPolicy policy, List<Item> governed, Instant now) {
    List<Item> newestFirst = new ArrayList<>(governed);
    // Ties (the same millisecond) fall to the name: exchange ids grow with time.
    newestFirst.sort(Comparator.comparing(Item::at).thenComparing(Item::name).reversed());
    int keep = policy.keepLatest() == null ? 0 : policy.keepLatest();
    Map<Item, String> doomed = new LinkedHashMap<>();
    List<Item> candidates = new ArrayList<>();
    for (int i = keep; i < newestFirst.size(); i++) {
      Item item = newestFirst.get(i);
      boolean youngerThanMin = policy.minAgeDays() != null
          && item.at().isAfter(now.minus(Duration.ofDays(policy.minAgeDays())));
      if (!youngerThanMin) {
        candidates.add(item);
      }
    }
    boolean onlyKeep = policy.maxAgeDays() == null && policy.maxSizeGb() == null;
    for (Item item : candidates) {
      if (onlyKeep) {
        doomed.put(item, "beyond the " + keep + " latest");
      } else if (policy.maxAgeDays() != null
          && item.at().isBefore(now.minus(Duration.ofDays(policy.maxAgeDays())))) {
        doomed.put(item, "older than " + policy.maxAgeDays() + " days");
      }
    }
    if (policy.maxSizeGb() != null) {
      long limit =
          policy.maxSizeGb().multiply(BigDecimal.valueOf(StorageUsage.GB)).longValue();
      long total = newestFirst.stream()
          .filter(item -> !doomed.containsKey(item))
          .mapToLong(Item::bytes)
          .sum();
      for (int i = candidates.size() - 1; i >= 0 && total > limit; i--) {
        Item oldest = candidates.get(i);
        if (!doomed.containsKey(oldest)) {
          doomed.put(oldest, "over " + policy.maxSizeGb().toPlainString() + " GB");
          total -= oldest.bytes();
        }
      }
    }
    return doomed;
  }

  private List<Item> items(String orgId, RetentionPolicy policy) {
    if (policy.type() == DataClass.CONVERSATION_HISTORY) {
      return history.forRetention(orgId).stream()
          .map(e -> new Item(
              DataClass.CONVERSATION_HISTORY,
              e.instanceId(),
              e.id(),
              e.createdAt(),
              e.bytes(),
              List.of()))
          .toList();
    }
    String prefix = policy.type().wireName() + "/";
    Map<String, List<StoredFile>> grouped = new LinkedHashMap<>();
    for (StoredFile file : files.ofClass(orgId, policy.type())) {
      String inClass = file.path().substring(prefix.length());
      if (!policy.governs(inClass)) {
        continue;
      }
      // An adapter is the folder (or file) right under lora_adapters/: it goes whole.
      String name = policy.type() == DataClass.LORA_ADAPTERS
          ? prefix + inClass.split("/", 2)[0]
          : file.path();
      grouped
          .computeIfAbsent(file.instanceId() + "\u0000" + name, k -> new ArrayList<>())
          .add(file);
    }
    List<Item> items = new ArrayList<>();
    grouped.forEach((key, group) -> items.add(new Item(
        policy.type(),
        group.get(0).instanceId(),
        key.substring(key.indexOf('\u0000') + 1),
        group.stream().map(StoredFile::updatedAt).max(Comparator.naturalOrder()).orElseThrow(),
        group.stream().mapToLong(StoredFile::size).sum(),
        group.stream().map(StoredFile::path).toList())));
    return items;
  }

  private void delete(Organization org, Item item, String actor, String requestId) {
    if (item.type() == DataClass.CONVERSATION_HISTORY) {
      try {
        history.delete(item.instanceId(), item.name());
        log.record(
            org.id(),
            item.instanceId(),
            actor,
            "retention_delete",
            "conversation_history/" + item.name(),
            item.bytes(),
            "ok",
            requestId);
      } catch (ApiException gone) {
        // Deleted meanwhile (by hand, or by another node's run): nothing left to do.
      }
      return;
    }
    for (String path : item.paths()) {
      try {
        files.delete(
            org,
            item.instanceId(),
            StoragePath.of(path, "path"),
            new FileStore.Actor(actor, requestId),
            "retention_delete");
      } catch (ApiException gone) {
        // Deleted meanwhile: nothing left to do.
      }
    }
  }
}
