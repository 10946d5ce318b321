package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.json.Json;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AdminCommandTest {
  @TempDir
  Path dataDir;

  EngramConfig config;

  record Result(int exit, String out, String err) {
    JsonNode json() {
      return Json.read(out, JsonNode.class);
    }
  }

  @BeforeEach
  void configure() {
    config = EngramConfig.fromEnvironment(Map.of("ENGRAM_DATA_DIR", dataDir.toString()));
  }

  Result runWithInput(String stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = new AdminCommand(
            config,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)))
        .run(args);
    return new Result(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  Result run(String... args) {
    return runWithInput("", args);
  }

  @Test
  void theAdminCommandsDoWhatTheRoutesDo() {
    Result org = run("org", "create", "--name", "Acme", "--plan", "growth", "--json");
    assertThat(org.exit()).as(org.err()).isZero();
    String orgId = org.json().get("id").asText();
    assertThat(org.json().at("/limits/capability_count").isNull()).isTrue();

    assertThat(run("org", "get", orgId, "--json").json().get("name").asText()).isEqualTo("Acme");

    Result user = runWithInput(
        "s3cret-password-long\n",
        "user",
        "create",
        "--org",
        orgId,
        "--email",
        "a@example.com",
        "--role",
        "owner",
        "--password-stdin",
        "--json");
    assertThat(user.exit()).as(user.err()).isZero();
    assertThat(user.json().get("role").asText()).isEqualTo("owner");

    Result token = run(
        "token",
        "create",
        "--org",
        orgId,
        "--name",
        "bot",
        "--scope",
        "memory:read",
        "--scope",
        "memory:write",
        "--agent",
        "sales",
        "--json");
    assertThat(token.exit()).as(token.err()).isZero();
    assertThat(token.json().get("token").asText()).startsWith("engc_");
    assertThat(token.json().get("scopes")).hasSize(2);
    String tokenId = token.json().get("id").asText();

    Result list = run("token", "list", "--org", orgId, "--json");
    assertThat(list.out())
        .contains(tokenId)
        .doesNotContain(token.json().get("token").asText());
    assertThat(run("token", "revoke", "--org", orgId, "--id", tokenId, "--json")
            .json()
            .get("revoked")
            .asBoolean())
        .isTrue();

    Result key = run(
        "api-key",
        "create",
        "--org",
        orgId,
        "--name",
        "ci",
        "--permission",
        "inference",
        "--rate-limit",
        "250",
        "--json");
    assertThat(key.json().get("rate_limit").asInt()).isEqualTo(250);
    assertThat(run("account-key", "create", "--name", "ops", "--json")
            .json()
            .get("token")
            .asText())
        .startsWith("enga_");
    assertThat(run("account-key", "list").out()).contains("name=ops").contains("1 item(s)");
  }

  @Test
  void humanOutputShowsTheSecretOnceWithAWarning() {
    String orgId =
        run("org", "create", "--name", "Acme", "--json").json().get("id").asText();
    Result key = run("api-key", "create", "--org", orgId, "--name", "ci", "--permission", "admin");
    assertThat(key.out()).contains("token: engk_").contains("shown only now");
  }

  @Test
  void badInputFailsWithTheRoutesMessageAndExitCode1() {
    Result badPlan = run("org", "create", "--name", "X", "--plan", "platinum");
    assertThat(badPlan.exit()).isEqualTo(1);
    assertThat(badPlan.err()).contains("Unknown plan 'platinum'");
    Result missingOrg = run("token", "list", "--org", "org_missing");
    assertThat(missingOrg.exit()).isEqualTo(1);
    assertThat(missingOrg.err()).contains("Organization not found");
    Result badRate = run(
        "api-key",
        "create",
        "--org",
        "org_x",
        "--name",
        "k",
        "--permission",
        "admin",
        "--rate-limit",
        "x");
    assertThat(badRate.exit()).isEqualTo(1);
  }

  @Test
  void usageErrorsExitWith2() {
    assertThat(run("org").exit()).isEqualTo(2);
    assertThat(run("org", "explode").exit()).isEqualTo(2);
    assertThat(run("org", "create", "--name").exit()).isEqualTo(2);
  }
}
