package io.engram.memory;

import io.engram.support.TestServer;

/** The same contract on PostgreSQL, where racing writers overlap for real; mandatory in CI. */
class PostgresMemoryWriteTest extends MemoryWriteContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().postgres().start();
  }
}
