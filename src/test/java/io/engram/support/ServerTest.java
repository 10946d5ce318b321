package io.engram.support;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** For test classes that share one default server (SQLite, operator key) across their tests. */
public abstract class ServerTest {
  protected static TestServer server;
  protected static Http http;

  @BeforeAll
  static void startServer() {
    server = TestServer.start();
    http = server.http;
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }
}
