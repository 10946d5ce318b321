package io.engram.memory;

import io.engram.store.Database;

/** The memory domain's stores over one database. */
public record MemoryStores(
    MemoryStore memories,
    MemoryHistory history,
    MemorySettingsStore settings,
    ChangeLog changeLog,
    EventStore events,
    IdempotencyKeys idempotencyKeys) {

  public static MemoryStores open(Database database) {
    return new MemoryStores(
        new MemoryStore(database),
        new MemoryHistory(database),
        new MemorySettingsStore(database),
        new ChangeLog(database),
        new EventStore(database),
        new IdempotencyKeys(database));
  }
}
