package io.engram.memory;

import io.engram.support.TestServer;

/** End users and sessions on PostgreSQL; mandatory in CI. */
class PostgresEndUserMemoryTest extends EndUserMemoryContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().postgres().env("RATE_LIMIT_REQUESTS", "100000").start();
  }
}
