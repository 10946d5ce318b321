package io.engram.memory;

import io.engram.support.TestServer;

class SqliteMemoryWriteTest extends MemoryWriteContract {
  @Override
  TestServer startServer() {
    return TestServer.start();
  }
}
