package io.engram.guardrails;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Output guardrails and restore through real HTTP, against a fake upstream scripted to answer
 * with what trips them, cut into chunks where it hurts most (through an email, through a key):
 * a whole answer that trips a block becomes the error, a streamed one ends with an error event
 * before any of the blocked text; a redaction reaches the client whole and streamed alike; restore
 * gives the client its originals while the provider saw placeholders; every firing is in the
 * request log (never the text), the preview tells what would fire, and a block raises the
 * organization's guardrail_blocked alert.
 */
class OutputGuardrailsTest extends GuardrailServerTest {
  private static List<JsonNode> chunks(Http.Response stream) {
    return io.engram.support.Sse.chunks(stream.text());
  }

  private static String content(List<JsonNode> chunks) {
    StringBuilder text = new StringBuilder();
    chunks.forEach(c -> text.append(c.at("/choices/0/delta/content").asText("")));
    return text.toString();
  }

  @Test
  void anAnswerThatTripsABlockBecomesTheErrorWholeAndEndsTheStreamBeforeTheBlockedText() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    org.configure("{\"request_log\":{\"contents\":true}}");
    String id = created(org, """
        {"name":"No keys out","applies_to":["output"],"check":{"type":"secrets"},"action":"block"}""");
    String[] answer = {"Sure. ", "word ".repeat(150), "Use AKIAIOSF", "ODNN7EXAMPLE", " now."};
    upstream.script(FakeUpstream.Script.NORMAL.pieces(answer));
    Http.Response whole = chat(org, "What is the deploy key?", false);
    assertThat(whole.status()).as(whole.text()).isEqualTo(400);
    assertThat(whole.json().at("/error/code").asText()).isEqualTo("guardrail_blocked");
    assertThat(whole.text()).contains(id, "No keys out", "answer").doesNotContain("AKIA");
    assertThat(whole.header("x-engram-guardrails")).contains(id + ";phase=output;action=block");

    Http.Response streamed = chat(org, "What is the deploy key?", true);
    assertThat(streamed.status()).isEqualTo(200);
    List<JsonNode> chunks = chunks(streamed);
    assertThat(content(chunks)).startsWith("Sure. word").doesNotContain("AKIA");
    assertThat(chunks.getLast().at("/error/code").asText()).isEqualTo("guardrail_blocked");
    assertThat(chunks.getLast().toString()).contains(id);
    assertThat(streamed.text()).doesNotContain("[DONE]");

    // Both kept in the log with the guardrail, the answer as the client got it (none), and the
    // provider's tokens charged: it did produce them.
    JsonNode logged = org.read("/requests?guardrail_id=" + id).path("data");
    assertThat(logged).hasSize(2);
    for (JsonNode record : logged) {
      assertThat(record.path("status").asInt()).isEqualTo(400);
      assertThat(record.path("error_code").asText()).isEqualTo("guardrail_blocked");
      assertThat(record.at("/guardrails/0/phase").asText()).isEqualTo("output");
      assertThat(record.at("/guardrails/0/kinds/0").asText()).isEqualTo("aws_access_key");
      assertThat(record.path("completion_tokens").asInt()).isPositive();
      JsonNode one = org.read("/requests/" + record.path("id").asText());
      assertThat(one.toString()).doesNotContain("AKIA");
    }
  }

  @Test
  void aRedactionReachesTheClientTheSameWholeOrStreamedCutThroughTheMiddleOfAnEmail() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String id = created(org, """
        {"name":"Mask emails out","applies_to":["output"],"check":{"type":"pii","entities":["email"]},
         "action":"redact"}""");
    upstream.script(FakeUpstream.Script.NORMAL.pieces(
        "Write to ", "ana.m", "artin@exa", "mple.com", " or to ", "b", "o@example.org", " today."));
    Http.Response whole = chat(org, "Who do I write to?", false);
    assertThat(whole.status()).as(whole.text()).isEqualTo(200);
    String expected = "Write to [EMAIL_1] or to [EMAIL_2] today.";
    assertThat(whole.json().at("/choices/0/message/content").asText()).isEqualTo(expected);
    assertThat(whole.header("x-engram-guardrails"))
        .contains(id + ";phase=output;action=redact;kinds=email");
    Http.Response streamed = chat(org, "Who do I write to?", true);
    assertThat(content(chunks(streamed))).isEqualTo(expected);
    assertThat(streamed.text()).contains("[DONE]").doesNotContain("example");
    String metrics = server.asOperator(server.http.get("/metrics")).text();
    assertThat(metrics)
        .contains("engram_guardrail_total{action=\"redact\",guardrail=\"" + id
            + "\",phase=\"output\"} 2.0");
  }

  @Test
  void restoreGivesTheClientItsOriginalsBackWhileTheProviderAndTheLogSawPlaceholders() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    org.configure("{\"request_log\":{\"contents\":true}}");
    created(org, """
        {"name":"Mask emails","applies_to":["input"],"check":{"type":"pii","entities":["email"]},
         "action":"redact","restore":true}""");
    upstream.script(FakeUpstream.Script.NORMAL.pieces(
        "I will write to [EMA", "IL_1] and copy [EMAIL_2", "]; [TEAM] stays."));
    String asked = "Draft a note to ana@example.com, copy bo@example.com";
    Http.Response whole = chat(org, asked, false);
    assertThat(whole.status()).as(whole.text()).isEqualTo(200);
    String expected = "I will write to ana@example.com and copy bo@example.com; [TEAM] stays.";
    assertThat(whole.json().at("/choices/0/message/content").asText()).isEqualTo(expected);
    assertThat(upstream.lastRequest().at("/messages/0/content").asText())
        .isEqualTo("Draft a note to [EMAIL_1], copy [EMAIL_2]");
    Http.Response streamed = chat(org, asked, true);
    assertThat(content(chunks(streamed))).isEqualTo(expected);
    JsonNode record = org.read("/requests/" + streamed.header("X-Request-Id"));
    assertThat(record.toString()).doesNotContain("example.com").contains("[EMAIL_1]");
  }

  @Test
  void anInputBlockIsKeptInTheLogAndAPreviewTellsWhatWouldFireWithoutCountingIt() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String block = created(org, """
        {"name":"No cards","applies_to":["input","output"],
         "check":{"type":"pii","entities":["payment_card"]},"action":"block"}""");
    String redact = created(org, """
        {"name":"Mask emails","applies_to":["memory_write"],"check":{"type":"pii",
         "entities":["email"]},"action":"redact"}""");
    Http.Response refused = chat(org, "Charge 4111 1111 1111 1111 please", false);
    assertThat(refused.status()).isEqualTo(400);
    JsonNode logged = org.read("/requests?guardrail_id=" + block).path("data");
    assertThat(logged).hasSize(1);
    assertThat(logged.at("/0/guardrails/0/phase").asText()).isEqualTo("input");
    assertThat(logged.at("/0/error_code").asText()).isEqualTo("guardrail_blocked");

    Http.Response preview = org.post(
        "/guardrails/preview", "{\"text\":\"Mail ana@example.com the card 4111 1111 1111 1111\"}");
    assertThat(preview.status()).as(preview.text()).isEqualTo(200);
    JsonNode phases = preview.json().path("phases");
    assertThat(phases.findValuesAsText("phase")).containsExactly("input", "output", "memory_write");
    assertThat(phases.get(0).path("blocked_by").asText()).isEqualTo(block);
    assertThat(phases.get(0).path("text").isNull()).isTrue();
    assertThat(phases.get(2).path("text").asText())
        .isEqualTo("Mail [EMAIL_1] the card 4111 1111 1111 1111");
    assertThat(phases.get(2).at("/fired/0/guardrail_id").asText()).isEqualTo(redact);
    Http.Response badPhase =
        org.post("/guardrails/preview", "{\"text\":\"x\",\"phase\":\"later\"}");
    assertThat(badPhase.json().at("/error/param").asText()).isEqualTo("phase");
  }

  @Test
  void aBlockRaisesTheOrganizationsGuardrailBlockedAlertNamingTheGuardrailOnce() throws Exception {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String id = created(org, """
        {"name":"No SSNs","applies_to":["input"],"check":{"type":"pii","entities":["us_ssn"]},
         "action":"block"}""");
    for (int i = 0; i < 3; i++) {
      assertThat(chat(org, "My SSN is 123-45-6789", false).status()).isEqualTo(400);
    }
    JsonNode alerts = null;
    for (int waited = 0; waited < 100; waited++) {
      alerts = org.read("/alerts?kind=guardrail_blocked").path("data");
      if (!alerts.isEmpty()) {
        break;
      }
      Thread.sleep(100);
    }
    assertThat(alerts).hasSize(1);
    assertThat(alerts.at("/0/state").asText()).isEqualTo("firing");
    assertThat(alerts.at("/0/message").asText())
        .contains(id, "No SSNs", "us_ssn")
        .doesNotContain("6789");
  }
}
