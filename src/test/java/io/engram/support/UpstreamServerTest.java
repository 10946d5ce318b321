package io.engram.support;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * Tests of one Engram (SQLite) whose organizations' models run on one fake provider: both started
 * once for the class, the provider answering normally again after each test.
 */
public abstract class UpstreamServerTest {
  protected static FakeUpstream upstream;
  protected static TestServer server;

  @BeforeAll
  static void startServerAndUpstream() {
    upstream = new FakeUpstream();
    server = TestServer.start();
  }

  @AfterAll
  static void stopServerAndUpstream() {
    server.close();
    upstream.close();
  }

  @AfterEach
  void upstreamAnswersNormally() {
    upstream.script(FakeUpstream.Script.NORMAL);
  }
}
