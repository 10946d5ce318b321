package io.engram.capabilities;

import io.engram.support.TestServer;

class SqliteCapabilityExecutionTest extends CapabilityExecutionContract {
  @Override
  TestServer startServer() {
    return TestServer.start();
  }
}
