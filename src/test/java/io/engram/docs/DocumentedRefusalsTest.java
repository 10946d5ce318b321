package io.engram.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.local.TinyModel;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * Every refusal docs/inference.md documents in its table of refusals, sent as the table says to
 * the route and model it names: the server answers the status, code and parameter the table gives,
 * nothing reaches a provider, and no row is left unchecked. The table is the documentation a
 * client reads, so a refusal the server no longer makes (or makes otherwise) fails here.
 */
class DocumentedRefusalsTest {
  private static final Path DOC = Path.of("docs/inference.md");
  private static final String TABLE = "### Refusals";
  private static final Pattern ROW = Pattern.compile(
      "^\\| (chat|completions|responses|messages|embeddings) \\| (in-process|provider|-) \\| "
          + "`(\\{.*})` \\| (\\d{3}) `([a-z_]+)` `([^`]+)` \\|");
  /** {@link PricedOrganization}'s chat model, served by the fake upstream over OpenAI's API. */
  private static final String PROVIDER_MODEL = "priced";

  /** A refusal as the table documents it. */
  record Refusal(String route, String model, String sent, int status, String code, String param) {
    String path() {
      return switch (route) {
        case "chat" -> "/v1/chat/completions";
        default -> "/v1/" + route;
      };
    }

    /** The least request of the route and model, with what the row sends merged in. */
    String body() {
      String modelId = model.equals("provider") ? PROVIDER_MODEL : TinyModel.ID;
      String least = switch (route) {
        case "chat", "messages" ->
          "{\"model\":\"" + modelId + "\",\"max_tokens\":3,\"memory\":false,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        case "completions" -> "{\"model\":\"" + modelId + "\",\"prompt\":\"hi\",\"max_tokens\":3}";
        case "responses" ->
          "{\"model\":\"" + modelId + "\",\"input\":\"hi\",\"max_output_tokens\":16,"
              + "\"memory\":false}";
        default -> "{\"model\":\"all-minilm-l6-v2\",\"input\":\"hi\"}";
      };
      ObjectNode body = Json.read(least, ObjectNode.class);
      body.setAll(Json.read(sent, ObjectNode.class));
      return Json.write(body);
    }
  }

  static List<Refusal> documented() throws IOException {
    List<String> lines = Files.readAllLines(DOC);
    int start = lines.indexOf(TABLE);
    assertThat(start).as("docs/inference.md has a section '%s'", TABLE).isNotNegative();
    List<Refusal> refusals = new ArrayList<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("#")) {
        break;
      }
      if (!line.startsWith("| ") || line.startsWith("| Route") || line.startsWith("|---")) {
        continue;
      }
      Matcher row = ROW.matcher(line);
      assertThat(row.find())
          .as("a row of the refusals' table this test reads: %s", line)
          .isTrue();
      refusals.add(new Refusal(
          row.group(1),
          row.group(2),
          row.group(3),
          Integer.parseInt(row.group(4)),
          row.group(5),
          row.group(6)));
    }
    return refusals;
  }

  @Test
  void everyDocumentedRefusalIsRefusedAsDocumented() throws IOException {
    List<Refusal> refusals = documented();
    assertThat(refusals).hasSizeGreaterThan(30);
    Path models = Files.createTempDirectory("engram-models");
    TinyModel.write(models, 7);
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer server = TestServer.builder()
            .env("MODEL_CACHE_DIR", models.toString())
            .env("RATE_LIMIT_REQUESTS", "1000000")
            .start()) {
      String key = PricedOrganization.create(server, "growth", upstream).key();
      SoftAssertions softly = new SoftAssertions();
      for (Refusal refusal : refusals) {
        int before = upstream.requests().size();
        Http.Response answer =
            server.http.post(refusal.path()).bearer(key).json(refusal.body()).send();
        JsonNode error = answer.json().path("error");
        String seen = answer.status() + " " + error.path("code").asText() + " "
            + error.path("param").asText();
        softly
            .assertThat(seen)
            .as("%s %s %s (%s)", refusal.route(), refusal.model(), refusal.sent(), answer.text())
            .isEqualTo(refusal.status() + " " + refusal.code() + " " + refusal.param());
        softly
            .assertThat(upstream.requests().size())
            .as("sent to the provider: %s", refusal.sent())
            .isEqualTo(before);
      }
      softly.assertAll();
    }
  }
}
