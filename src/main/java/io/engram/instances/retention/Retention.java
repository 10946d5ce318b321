package io.engram.instances.retention;

import io.engram.instances.files.FileStore;
import io.engram.instances.storage.ConversationHistory;
import io.engram.instances.storage.DataClass;
import io.engram.instances.storage.StorageLog;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StorageUsage;
import io.engram.instances.storage.StoredFile;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import io.engram.store.Rows;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
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
 * A policy's {@code export_destination} (with {@code export_before_delete}) and {@code archive_to}
 * receive a copy of each item first ({@link RetentionExport}); an item whose copy failed is not
 * deleted, and the run reports the violation.
 */
public final class Retention {
  /** One thing a policy may delete: an exchange, an adapter (all its files) or a file. */
  record Item(
      DataClass type, String instanceId, String name, Instant at, long bytes, List<String> paths) {}

  /**
   * What a run did (or, dry, would do) with one item: why it goes, where it was (or would be)
   * exported and archived first, and {@code failure} when that failed, so it was kept.
   */
  public record Outcome(
      String item,
      String instanceId,
      DataClass type,
      long bytes,
      String reason,
      String exportedTo,
      String archivedTo,
      String failure) {
    public boolean deleted() {
      return failure == null;
    }
  }

  /** Told after each run whether an export failed (the retention-violation alert). */
  public interface Violations {
    void ran(Organization org, List<Outcome> kept);
  }

  private final Database db;
  private final FileStore files;
  private final ConversationHistory history;
  private final StorageLog log;
  private final Clock clock;
  private final MeterRegistry registry;
  private final ObjectStoreConnections stores;
  private volatile Violations violations = (org, kept) -> {};

  public Retention(
      Database db,
      FileStore files,
      ConversationHistory history,
      StorageLog log,
      ObjectStoreConnections stores,
      MeterRegistry registry,
      Clock clock) {
    this.stores = stores;
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
        // Kept policies were checked when set; a store disconnected since fails at the run,
        // which reports it, rather than here.
        .map(json -> RetentionPolicy.parseAll(
            Json.read(json, com.fasterxml.jackson.databind.JsonNode.class), uri -> true))
        .orElse(List.of());
  }

  /**
   * How long the organization's policies of {@code type} let anything of it live: the shortest
   * {@code max_age_days} among those that keep no fixed number of items (a {@code keep_latest}
   * policy keeps its newest items at any age). Other stores that hold that class of data (the
   * request log holds conversations) are kept no longer than this.
   */
  public Optional<Duration> maxAge(String orgId, DataClass type) {
    return policies(orgId).stream()
        .filter(policy -> policy.type() == type && policy.keepLatest() == null)
        .map(RetentionPolicy::maxAgeDays)
        .filter(java.util.Objects::nonNull)
        .min(Integer::compare)
        .map(Duration::ofDays);
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

  /** Where each run's failed exports are reported. */
  public void onViolations(Violations listener) {
    this.violations = listener;
  }

  /**
   * Applies the organization's policies; with {@code dryRun}, only tells what would go. An item
   * a policy exports or archives is written there (and checked) first; if that fails, the item
   * is kept and the failure reported.
   */
  public List<Outcome> run(Organization org, boolean dryRun, String actor, String requestId) {
    List<RetentionPolicy> policies = policies(org.id());
    Instant now = clock.instant();
    List<Outcome> outcomes = new ArrayList<>();
    Set<String> chosen = new HashSet<>();
    try (RetentionExport export = new RetentionExport(stores, files, history, org)) {
      for (RetentionPolicy policy : policies) {
        for (Map.Entry<Item, String> doomed :
            select(policy, items(org.id(), policy), now).entrySet()) {
          Item item = doomed.getKey();
          if (chosen.add(item.type() + "/" + item.instanceId() + "/" + item.name())) {
            String exportTo = policy.exportBeforeDelete() ? policy.exportDestination() : null;
            String failure = dryRun ? null : copyOut(export, item, exportTo, policy.archiveTo());
            outcomes.add(new Outcome(
                item.name(),
                item.instanceId(),
                item.type(),
                item.bytes(),
                doomed.getValue(),
                exportTo,
                policy.archiveTo(),
                failure));
            if (!dryRun && failure == null) {
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
    }
    if (!dryRun) {
      db.write(h -> h.createUpdate(
              "UPDATE retention_policies SET last_run_at = :now WHERE org_id = :org")
          .bind("now", now.toEpochMilli())
          .bind("org", org.id())
          .execute());
      violations.ran(org, outcomes.stream().filter(o -> !o.deleted()).toList());
    }
    return outcomes;
  }

  /** Writes the item to its export and archive destinations; the failure, or null. */
  private String copyOut(RetentionExport export, Item item, String exportTo, String archiveTo) {
    for (String destination : new String[] {exportTo, archiveTo}) {
      if (destination == null) {
        continue;
      }
      try {
        export.write(item, destination);
      } catch (IOException | RuntimeException e) {
        Counter.builder("engram.retention.export.failures")
            .description("Items retention kept because their export or archive failed")
            .tag("type", item.type().wireName())
            .register(registry)
            .increment();
        return "not written to " + destination + ": " + e.getMessage();
      }
    }
    return null;
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
