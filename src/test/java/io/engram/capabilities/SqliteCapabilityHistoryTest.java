package io.engram.capabilities;

import io.engram.support.TestServer;

class SqliteCapabilityHistoryTest extends CapabilityHistoryContract {
  @Override
  TestServer startServer() {
    return TestServer.start();
  }
}
