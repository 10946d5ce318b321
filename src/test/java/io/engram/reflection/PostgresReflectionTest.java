package io.engram.reflection;

import io.engram.support.TestServer;

/** The reflection scenarios on PostgreSQL; mandatory in CI. */
class PostgresReflectionTest extends ReflectionContract {
  @Override
  TestServer startServer() {
    return TestServer.builder().postgres().start();
  }
}
