package io.engram.memory;

import io.engram.support.TestServer;

/** Export and import on SQLite. */
class SqliteMemoryTransferTest extends MemoryTransferContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().env("RATE_LIMIT_REQUESTS", "100000").start();
  }
}
