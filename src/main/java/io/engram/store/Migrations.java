package io.engram.store;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Applies the Flyway migrations of one dialect (folders db/migration/sqlite and db/migration/postgresql). */
final class Migrations {
  private static final Logger LOG = LoggerFactory.getLogger(Migrations.class);

  private Migrations() {}

  static void apply(DataSource dataSource, Database.Kind kind, String schema) {
    var configuration = Flyway.configure()
        .dataSource(dataSource)
        .locations("classpath:db/migration/" + kind.name().toLowerCase(java.util.Locale.ROOT))
        .failOnMissingLocations(true);
    if (schema != null) {
      configuration.schemas(schema).createSchemas(true);
    }
    MigrateResult result = configuration.load().migrate();
    LOG.info(
        "database migrations applied: {} (schema version {})",
        result.migrationsExecuted,
        result.targetSchemaVersion == null ? "unchanged" : result.targetSchemaVersion);
  }
}
