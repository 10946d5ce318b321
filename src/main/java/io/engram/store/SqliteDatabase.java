package io.engram.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jdbi.v3.core.Jdbi;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * The embedded database: one SQLite file in WAL mode. SQLite allows one writer at a time, so
 * writes go through a pool of exactly one connection (Hikari queues the rest) and open their
 * transactions IMMEDIATE, which avoids lock upgrades failing with SQLITE_BUSY. Reads use their
 * own pool and run beside the writer. {@code synchronous=FULL} makes a committed transaction
 * survive a killed process and a power loss.
 */
public final class SqliteDatabase extends JdbiDatabase {
  /**
   * The database file is read through a memory mapping up to this size, shared by every
   * connection through the operating system's page cache: without it each connection copies the
   * pages it reads into its own cache (2 MB by default, reset whenever another connection has
   * written), and a memory-on chat's rows (about a hundred, anywhere in the file) were a read()
   * call each (docs/benchmarks.md, issue 43).
   */
  static final long MMAP_BYTES = 1L << 30;

  private final HikariDataSource writerPool;
  private final HikariDataSource readerPool;

  public SqliteDatabase(Path file) {
    this(url(file));
  }

  private SqliteDatabase(String url) {
    this(
        pool(url, "sqlite-writer", 1, SQLiteConfig.TransactionMode.IMMEDIATE),
        pool(url, "sqlite-reader", 4, SQLiteConfig.TransactionMode.DEFERRED));
  }

  private SqliteDatabase(HikariDataSource writerPool, HikariDataSource readerPool) {
    super(Jdbi.create(readerPool), Jdbi.create(writerPool), null);
    this.writerPool = writerPool;
    this.readerPool = readerPool;
    Migrations.apply(writerPool, Kind.SQLITE, null);
  }

  private static String url(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the data directory for " + file, e);
    }
    return "jdbc:sqlite:" + file.toAbsolutePath();
  }

  private static HikariDataSource pool(
      String url, String name, int size, SQLiteConfig.TransactionMode mode) {
    SQLiteConfig sqlite = new SQLiteConfig();
    sqlite.setJournalMode(SQLiteConfig.JournalMode.WAL);
    sqlite.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
    sqlite.setBusyTimeout(30_000);
    sqlite.enforceForeignKeys(true);
    sqlite.setPragma(SQLiteConfig.Pragma.MMAP_SIZE, String.valueOf(MMAP_BYTES));
    sqlite.setTransactionMode(mode);
    SQLiteDataSource dataSource = new SQLiteDataSource(sqlite);
    dataSource.setUrl(url);
    HikariConfig config = new HikariConfig();
    config.setDataSource(dataSource);
    config.setPoolName(name);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(30_000);
    return new HikariDataSource(config);
  }

  @Override
  public Kind kind() {
    return Kind.SQLITE;
  }

  @Override
  public void close() {
    readerPool.close();
    writerPool.close();
  }
}
