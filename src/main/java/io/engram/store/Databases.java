package io.engram.store;

import io.engram.platform.config.EngramConfig;

/** Opens the database the configuration names: PostgreSQL when DATABASE_URL is set, else SQLite in the data dir. */
public final class Databases {

  private Databases() {}

  public static Database open(EngramConfig config) {
    return config.storage().usesPostgres()
        ? new PostgresDatabase(config.storage().databaseUrl())
        : new SqliteDatabase(config.storage().dataDir().resolve("engram.db"));
  }
}
