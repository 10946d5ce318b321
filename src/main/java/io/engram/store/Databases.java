package io.engram.store;

import io.engram.platform.config.EngramConfig;

/** Opens the database the configuration names: PostgreSQL when DATABASE_URL is set, else SQLite in the data dir. */
public final class Databases {

  private Databases() {
  }

  public static Database open(EngramConfig config) {
    return config.usesPostgres()
        ? new PostgresDatabase(config.databaseUrl())
        : new SqliteDatabase(config.dataDir().resolve("engram.db"));
  }
}
