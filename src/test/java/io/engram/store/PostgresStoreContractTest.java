package io.engram.store;

import io.engram.support.TestDatabases;

/** The same contract on PostgreSQL; mandatory in CI (see {@link TestDatabases}). */
class PostgresStoreContractTest extends StoreContractTest {
  private String url;

  @Override
  Database open() {
    url = TestDatabases.freshPostgresUrl();
    return new PostgresDatabase(url);
  }

  @Override
  void cleanUp() {
    TestDatabases.drop(url);
  }
}
