package io.engram.reflection;

import io.engram.support.TestServer;

/** The reflection scenarios on the embedded default, SQLite. */
class SqliteReflectionTest extends ReflectionContract {
  @Override
  TestServer startServer() {
    return TestServer.start();
  }
}
