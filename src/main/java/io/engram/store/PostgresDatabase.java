package io.engram.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import org.jdbi.v3.core.Jdbi;

/**
 * The shared database for multi-node deployments. Accepts the libpq URL form
 * ({@code postgresql://user:password@host:5432/db?sslmode=require}) or a JDBC URL. A
 * {@code currentSchema} parameter selects (and creates) the schema Engram owns.
 */
public final class PostgresDatabase extends JdbiDatabase {

  private final HikariDataSource pool;

  public PostgresDatabase(String databaseUrl) {
    this(pool(databaseUrl));
  }

  private PostgresDatabase(HikariDataSource pool) {
    super(Jdbi.create(pool), Jdbi.create(pool));
    this.pool = pool;
    Migrations.apply(pool, Kind.POSTGRESQL, schemaOf(pool.getJdbcUrl()));
  }

  private static HikariDataSource pool(String databaseUrl) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("postgresql");
    config.setMaximumPoolSize(10);
    config.setConnectionTimeout(10_000);
    String jdbcUrl = databaseUrl;
    if (!databaseUrl.startsWith("jdbc:")) {
      URI uri = URI.create(databaseUrl);
      String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
      int port = uri.getPort() < 0 ? 5432 : uri.getPort();
      jdbcUrl = "jdbc:postgresql://" + uri.getHost() + ":" + port + uri.getRawPath() + query;
      if (uri.getRawUserInfo() != null) {
        String[] userInfo = uri.getRawUserInfo().split(":", 2);
        config.setUsername(URLDecoder.decode(userInfo[0], StandardCharsets.UTF_8));
        if (userInfo.length > 1) {
          config.setPassword(URLDecoder.decode(userInfo[1], StandardCharsets.UTF_8));
        }
      }
    }
    config.setJdbcUrl(jdbcUrl);
    return new HikariDataSource(config);
  }

  private static String schemaOf(String jdbcUrl) {
    int at = jdbcUrl.indexOf("currentSchema=");
    if (at < 0) {
      return null;
    }
    String rest = jdbcUrl.substring(at + "currentSchema=".length());
    int end = rest.indexOf('&');
    return end < 0 ? rest : rest.substring(0, end);
  }

  @Override
  public Kind kind() {
    return Kind.POSTGRESQL;
  }

  @Override
  public void close() {
    pool.close();
  }
}
