package io.engram.instances.storage;

import io.engram.organizations.Limit;
import io.engram.organizations.Organization;
import io.engram.organizations.Tier;
import io.engram.store.Database;
import java.util.EnumMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.LongSupplier;
import org.jdbi.v3.core.Handle;

/**
 * An organization's storage, measured from what is stored: the files of its instances by data
 * class, its memories' embeddings with their share of the index on disk, and its LoRA adapters;
 * and its limits, from its plan. The plan's storage (the spec's storage-by-plan table) is one
 * allowance for everything the organization keeps: a write that would take the total past it is
 * refused before a byte is kept.
 */
public final class StorageUsage {
  /** The spec counts storage in GB: 10^9 bytes, as disks are sold. */
  public static final long GB = 1_000_000_000L;

  /**
   * One memory's vector: 384 floats (the memory layer's model writes every row's vector at this
   * size; a test holds the two together, this layer being below that one).
   */
  public static final long VECTOR_BYTES = 384L * Float.BYTES;

  /** What an organization stores, in bytes (adapters counted). */
  public record Usage(Map<DataClass, Long> files, long embeddings, long adapters) {
    public long total() {
      return files.values().stream().mapToLong(Long::longValue).sum() + embeddings;
    }

    public long of(DataClass dataClass) {
      return files.getOrDefault(dataClass, 0L);
    }
  }

  /**
   * Limits in force: bytes of the whole allowance (the plan's storage and all that was bought;
   * empty: unlimited), adapters included (empty: unlimited), and what was bought.
   */
  public record Limits(
      OptionalLong bytes,
      OptionalLong adapters,
      OptionalLong planBytes,
      StorageBilling.Purchased purchased) {}

  private final Database db;
  private final LongSupplier indexBytes;

  /** {@code indexBytes}: the memory index's size on disk, shared out by embeddings held. */
  public StorageUsage(Database db, LongSupplier indexBytes) {
    this.db = db;
    this.indexBytes = indexBytes;
  }

  public Usage measure(String orgId) {
    return db.read(h -> {
      long own = vectorBytes(h, orgId);
      long all =
          h.createQuery("SELECT COUNT(*) FROM memories").mapTo(Long.class).one() * VECTOR_BYTES;
      long index = all == 0 ? 0 : Math.round(indexBytes.getAsLong() * (own / (double) all));
      return new Usage(files(h, orgId), own + index, adapters(h, orgId));
    });
  }

  /**
   * Bytes the organization keeps against its allowance: its files and its memory vectors (read
   * by organization, cheap enough for the alert evaluator's round every 15 seconds).
   */
  public long kept(String orgId) {
    return db.read(h -> used(h, orgId));
  }

  /**
   * The organizations that keep anything counted against an allowance (files, conversation
   * history, memories): those whose storage alert must be looked at even with no traffic.
   */
  public java.util.Set<String> organizationsKeeping() {
    return new java.util.HashSet<>(
        db.read(h -> h.createQuery("""
            SELECT org_id FROM storage_files
            UNION SELECT org_id FROM conversation_history_totals WHERE exchanges > 0
            UNION SELECT org_id FROM memories""").mapTo(String.class).list()));
  }

  /** Bytes the organization holds that count against its allowance (the write path's check). */
  public long used(Handle h, String orgId) {
    long files = files(h, orgId).values().stream().mapToLong(Long::longValue).sum();
    return files + vectorBytes(h, orgId);
  }

  /**
   * The organization's memory vectors: counted from the organization's index, not summed from the
   * rows. Every row holds one vector of the same size, and summing their lengths reads every row
   * (267 ms at 100,000 memories, holding a connection while requests wait; counting takes 4 ms).
   */
  private static long vectorBytes(Handle h, String orgId) {
    return h.createQuery("SELECT COUNT(*) FROM memories WHERE org_id = :org")
            .bind("org", orgId)
            .mapTo(Long.class)
            .one()
        * VECTOR_BYTES;
  }

  public Limits limits(Organization org) {
    Limit storage = org.plan().limits().storageGb();
    StorageBilling.Purchased bought = db.read(h -> StorageBilling.purchased(h, org.id()));
    OptionalLong plan =
        storage.isUnlimited() ? OptionalLong.empty() : OptionalLong.of(storage.value() * GB);
    return new Limits(
        plan.isEmpty() ? plan : OptionalLong.of(plan.getAsLong() + bought.bytes()),
        adaptersIncluded(org.plan().tier()),
        plan,
        bought);
  }

  /**
   * LoRA adapters a plan includes (the spec prices each one beyond them at $5 a month but does not
   * give the counts; docs/storage.md explains these).
   */
  static OptionalLong adaptersIncluded(Tier tier) {
    return switch (tier) {
      case FREE -> OptionalLong.of(1);
      case SPARK -> OptionalLong.of(3);
      case SEED -> OptionalLong.of(5);
      case RISE -> OptionalLong.of(10);
      case GROWTH, BOOST -> OptionalLong.of(20);
      case GOD, DEDICATED -> OptionalLong.empty();
      default -> OptionalLong.of(50);
    };
  }

  private static Map<DataClass, Long> files(Handle h, String orgId) {
    Map<DataClass, Long> bytes = new EnumMap<>(DataClass.class);
    // Kept per instance by the database's triggers (V27): one row per instance, not every exchange.
    long history = h.createQuery(
            "SELECT COALESCE(SUM(bytes), 0) FROM conversation_history_totals WHERE org_id = :org")
        .bind("org", orgId)
        .mapTo(Long.class)
        .one();
    if (history > 0) {
      bytes.put(DataClass.CONVERSATION_HISTORY, history);
    }
    h.createQuery(
            "SELECT data_class, SUM(size) FROM storage_files WHERE org_id = :org GROUP BY data_class")
        .bind("org", orgId)
        .map((rs, ctx) -> Map.entry(rs.getString(1), rs.getLong(2)))
        .forEach(
            e -> DataClass.of(e.getKey()).ifPresent(c -> bytes.merge(c, e.getValue(), Long::sum)));
    return bytes;
  }

  /** An adapter is a folder (or a file) directly under {@code lora_adapters/}. */
  private static long adapters(Handle h, String orgId) {
    return h
        .createQuery("SELECT instance_id, path FROM storage_files WHERE org_id = :org "
            + "AND data_class = 'lora_adapters'")
        .bind("org", orgId)
        .map((rs, ctx) -> rs.getString(1) + "/" + rs.getString(2).split("/")[1])
        .stream()
        .distinct()
        .count();
  }
}
