package io.engram.memory;

import io.engram.support.ServerTest;
import org.junit.jupiter.api.BeforeAll;

/** The shared server, with one Growth organization and a token holding every memory scope. */
abstract class MemoryServerTest extends ServerTest {
  static String org;
  static Memories memories;

  @BeforeAll
  static void organization() {
    org = server.createOrganization("growth");
    memories = Memories.of(
        server,
        server.token(org, null, "memory:read", "memory:write", "memory:control", "memory:delete"));
  }
}
