package io.engram.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.engram.platform.config.ConfigException;
import io.engram.platform.config.EngramConfig;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What API_KEY_REQUIRED=false means: with ENGRAM_OPEN_ORGANIZATION, the inference routes answer a
 * request that carries no credential as that organization (inference:chat only, its usage counted
 * to it); every other route still needs a credential, and a credential that is sent is checked as
 * ever. A combination that makes no sense stops start-up.
 */
class OpenOrganizationTest {
  private static final String CHAT =
      "{\"model\":\"open-model\",\"memory\":false,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

  @Test
  void theNamedOrganizationsInferenceRoutesAnswerWithoutAKeyAndNothingElseDoes(@TempDir Path data)
      throws Exception {
    String org;
    try (TestServer first = TestServer.builder().dataDir(data).start()) {
      org = first.createOrganization("seed");
    }
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer open = TestServer.builder()
            .dataDir(data)
            .env("API_KEY_REQUIRED", "false")
            .env("ENGRAM_OPEN_ORGANIZATION", org)
            .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
            .env("DEFAULT_MODEL", "open-model")
            .start()) {
      Http.Response chat = open.http.post("/v1/chat/completions").json(CHAT).send();
      assertThat(chat.status()).as(chat.text()).isEqualTo(200);
      assertThat(open.http.get("/v1/models").send().status()).isEqualTo(200);
      // Counted to the organization it answered as.
      open.engram.inference().flushUsage();
      assertThat(open.asOperator(open.http.get("/v1/organizations/" + org + "/usage"))
              .json()
              .at("/totals/requests")
              .asInt())
          .isEqualTo(1);
      // Everything else still needs a credential.
      assertThat(open.http.post("/v1/memory").json("{\"text\":\"x\"}").send().status())
          .isEqualTo(401);
      assertThat(open.http.get("/v1/organizations/" + org).send().status()).isEqualTo(401);
      assertThat(open.http.get("/api/assistants").send().status()).isEqualTo(401);
      // A credential that is sent is checked as ever.
      assertThat(open.http
              .post("/v1/chat/completions")
              .bearer("engk_wrong")
              .json(CHAT)
              .send()
              .status())
          .isEqualTo(401);
    }
  }

  @Test
  void combinationsThatMakeNoSenseStopStartUp(@TempDir Path data) {
    assertThatThrownBy(() -> EngramConfig.fromEnvironment(
            Map.of("ENGRAM_OPEN_ORGANIZATION", "org_x", "ENGRAM_DATA_DIR", data.toString())))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("needs API_KEY_REQUIRED=false");
    assertThatThrownBy(() -> TestServer.builder()
            .env("API_KEY_REQUIRED", "false")
            .env("ENGRAM_OPEN_ORGANIZATION", "org_nobody")
            .start())
        .hasMessageContaining("ENGRAM_OPEN_ORGANIZATION: no organization org_nobody");
  }
}
