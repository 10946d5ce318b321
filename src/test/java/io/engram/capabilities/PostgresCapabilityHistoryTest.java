package io.engram.capabilities;

import io.engram.support.TestServer;

/** The same contract on PostgreSQL, where concurrent writers really overlap; mandatory in CI. */
class PostgresCapabilityHistoryTest extends CapabilityHistoryContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().postgres().start();
  }
}
