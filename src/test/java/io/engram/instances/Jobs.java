package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;

/** Follows a storage job the way a client does: polling its route until it ends. */
final class Jobs {
  private Jobs() {}

  /** The job a 202 answered with, once it ended (any end); fails after a minute. */
  static JsonNode await(TestServer server, String bearer, Http.Response accepted)
      throws InterruptedException {
    assertThat(accepted.status()).as(accepted.text()).isEqualTo(202);
    String location = accepted.header("Location");
    assertThat(location).isNotNull();
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (true) {
      Http.Call call = server.http.get(location);
      Http.Response job =
          bearer == null ? server.asOperator(call) : call.bearer(bearer).send();
      assertThat(job.status()).as(job.text()).isEqualTo(200);
      String status = job.json().get("status").asText();
      if (!status.equals("queued") && !status.equals("running")) {
        return job.json();
      }
      assertThat(System.nanoTime())
          .as("job still " + status + ": " + job.text())
          .isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  /** The job, once it succeeded. */
  static JsonNode succeeded(TestServer server, String bearer, Http.Response accepted)
      throws InterruptedException {
    JsonNode job = await(server, bearer, accepted);
    assertThat(job.get("status").asText()).as(job.toString()).isEqualTo("succeeded");
    return job;
  }
}
