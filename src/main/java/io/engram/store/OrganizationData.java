package io.engram.store;

import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * A domain's part in an organization's snapshots and restores: the tables it owns that a snapshot
 * keeps, and how it puts their rows back. The snapshots ask each domain for its part, so no
 * package reads or writes another's tables (the layering test holds every package to its own).
 */
public interface OrganizationData {

  /**
   * The tables a snapshot keeps, each with the query that reads the organization's rows
   * ({@code :org} and {@code :instance} are bound), in the order they are written.
   */
  Map<String, String> tables();

  /** Before the restore's transaction: writes still on their way land first. */
  default void settle() {}

  /**
   * Puts the snapshot's rows back inside the restore's transaction (all or nothing with the
   * others'). A domain whose tables are kept only to be read (configuration, purchases) restores
   * nothing.
   */
  default Restored restore(Handle h, SnapshotRows rows, Restoring restoring) {
    return Restored.NOTHING;
  }

  /** What a restore is about: whose data, which instance, who asked, when. */
  record Restoring(String orgId, String instanceId, String requestId, long now) {}

  /**
   * What went back: the rows written, and the ids whose derived data (an index) must follow once
   * the transaction committed ({@link #restored}).
   */
  record Restored(int rows, Set<String> changed) {
    public static final Restored NOTHING = new Restored(0, Set.of());
  }

  /** After the restore committed: derived data follows what {@link #restore} changed. */
  default void restored(String orgId, Set<String> changed) {}
}
