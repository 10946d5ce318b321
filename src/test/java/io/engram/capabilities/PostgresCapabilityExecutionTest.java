package io.engram.capabilities;

import io.engram.support.TestServer;

/** The analytics handler's SQL on PostgreSQL; mandatory in CI. */
class PostgresCapabilityExecutionTest extends CapabilityExecutionContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().postgres().start();
  }
}
