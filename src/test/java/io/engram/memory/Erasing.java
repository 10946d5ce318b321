package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;

/** Waiting for an erasure job through HTTP, as a client does. */
final class Erasing {
  private Erasing() {}

  /** The erasure at {@code path}, read on {@code node} until completed (10 s at most). */
  static JsonNode completed(TestServer node, String token, String path) {
    for (int i = 0; i < 100; i++) {
      Http.Response seen = node.http.get(path).bearer(token).send();
      if (seen.status() == 200 && seen.json().get("status").asText().equals("completed")) {
        return seen.json();
      }
      ServerProcess.sleep(100);
    }
    throw new AssertionError("the erasure at " + path + " did not complete in 10 s");
  }
}
