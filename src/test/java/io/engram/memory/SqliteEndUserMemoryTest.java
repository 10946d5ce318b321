package io.engram.memory;

import io.engram.support.TestServer;

class SqliteEndUserMemoryTest extends EndUserMemoryContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().env("RATE_LIMIT_REQUESTS", "100000").start();
  }
}
