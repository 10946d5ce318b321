package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.access.Requires;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class GracefulShutdownTest {

  @Test
  void inFlightRequestsFinishWhenTheServerStops() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    TestServer server = TestServer.builder()
        .probe(routes -> routes.get("/v1/probe/slow", Requires.anyone(), ctx -> {
          entered.countDown();
          Thread.sleep(1500);
          ctx.result("finished");
        }))
        .start();
    CompletableFuture<Http.Response> slow =
        CompletableFuture.supplyAsync(() -> server.http.get("/v1/probe/slow").send());
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    server.close();
    Http.Response response = slow.get(10, TimeUnit.SECONDS);
    assertThat(response.status()).isEqualTo(200);
    assertThat(response.text()).isEqualTo("finished");
  }
}
