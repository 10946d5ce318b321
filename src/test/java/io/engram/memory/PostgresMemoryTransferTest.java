package io.engram.memory;

import io.engram.support.TestServer;

/** Export and import on PostgreSQL; mandatory in CI. */
class PostgresMemoryTransferTest extends MemoryTransferContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().postgres().env("RATE_LIMIT_REQUESTS", "100000").start();
  }
}
