package io.engram.memory;

import io.engram.support.TestServer;

class SqliteEndUserMemoryTest extends EndUserMemoryContract {
  @Override
  TestServer startServer() {
    return TestServer.start();
  }
}
