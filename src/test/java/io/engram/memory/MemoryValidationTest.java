package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad inputs on every memory route: a 400 (or 413/415) in the /v1 error shape, and nothing stored. */
class MemoryValidationTest extends MemoryServerTest {
  static String existing;

  @BeforeAll
  static void existingMemory() {
    existing = memories.remember("Invoices are sent on the first business day of the month");
  }

  static long stored(String table) {
    return server
        .engram
        .services()
        .database()
        .read(h ->
            h.createQuery("SELECT COUNT(*) FROM " + table).mapTo(Long.class).one());
  }

  static void assertRefused(Http.Response response, int status, String param) {
    assertThat(response.status()).as(response.text()).isEqualTo(status);
    assertThat(response.json().get("error").get("type").asText())
        .isEqualTo("invalid_request_error");
    assertThat(response.json().get("error").get("message").asText()).isNotBlank();
    if (param != null) {
      assertThat(response.json().get("error").get("param").asText()).isEqualTo(param);
    }
  }

  @Test
  void badMemoriesAreRefusedAndNothingIsStored() {
    long before = stored("memories");
    String tooLong = "x".repeat(MemoryInput.MAX_TEXT + 1);
    List<String[]> cases = List.of(
        new String[] {"{}", "text"},
        new String[] {"{\"text\":\"\"}", "text"},
        new String[] {"{\"text\":\"   \"}", "text"},
        new String[] {"{\"text\":42}", "text"},
        new String[] {"{\"text\":null}", "text"},
        new String[] {"{\"text\":\"" + tooLong + "\"}", "text"},
        new String[] {"{\"text\":\"ok\",\"subject\":\"" + "s".repeat(201) + "\"}", "subject"},
        new String[] {"{\"text\":\"ok\",\"memoryKind\":\"rumour\"}", "memoryKind"},
        new String[] {"{\"text\":\"ok\",\"memoryKind\":[\"fact\"]}", "memoryKind"},
        new String[] {"{\"text\":\"ok\",\"confidence\":1.5}", "confidence"},
        new String[] {"{\"text\":\"ok\",\"confidence\":-0.1}", "confidence"},
        new String[] {"{\"text\":\"ok\",\"confidence\":\"0.5\"}", "confidence"},
        new String[] {"{\"text\":\"ok\",\"confidence\":1e400}", "confidence"},
        new String[] {"{\"text\":\"ok\",\"metadata\":[1,2]}", "metadata"},
        new String[] {
          "{\"text\":\"ok\",\"metadata\":{\"blob\":\"" + "m".repeat(9000) + "\"}}", "metadata"
        },
        new String[] {"{\"text\":\"ok\",\"occurredAt\":\"2999-01-01T00:00:00Z\"}", "occurredAt"},
        new String[] {"{\"text\":\"ok\",\"occurredAt\":\"yesterday\"}", "occurredAt"},
        new String[] {"{\"text\":\"ok\",\"agent\":\"alpha\"}", "agent"},
        new String[] {"{\"text\":\"ok\",\"text\":\"twice\"}", null},
        new String[] {"{\"text\":\"ok\"", null},
        new String[] {"[\"text\"]", null});
    for (String[] c : cases) {
      assertRefused(memories.encode(c[0]), 400, c[1]);
    }
    assertRefused(
        server
            .http
            .post("/v1/memory")
            .bearer(memories.token())
            .body("text/plain", "remember this")
            .send(),
        415,
        null);
    Http.Response badKey = server
        .http
        .post("/v1/memory")
        .bearer(memories.token())
        .header("Idempotency-Key", "k".repeat(256))
        .json("{\"text\":\"ok\"}")
        .send();
    assertRefused(badKey, 400, "Idempotency-Key");
    assertThat(stored("memories")).isEqualTo(before);
  }

  @Test
  void badRetrievalsAreRefused() {
    List<String[]> cases = List.of(
        new String[] {"{}", "query"},
        new String[] {"{\"query\":\"\"}", "query"},
        new String[] {"{\"query\":\"q\",\"limit\":0}", "limit"},
        new String[] {"{\"query\":\"q\",\"limit\":101}", "limit"},
        new String[] {"{\"query\":\"q\",\"limit\":\"10\"}", "limit"},
        new String[] {"{\"query\":\"q\",\"includeContext\":\"yes\"}", "includeContext"},
        new String[] {
          "{\"query\":\"q\",\"includeContext\":true,\"contextMode\":\"summary\"}", "contextMode"
        },
        new String[] {"{\"query\":\"q\",\"contextMode\":\"full\"}", "contextMode"},
        new String[] {
          "{\"query\":\"q\",\"includeContext\":true,\"maxContextTokens\":10}", "maxContextTokens"
        },
        new String[] {"{\"query\":\"q\",\"memoryKind\":[\"fact\",\"gossip\"]}", "memoryKind"},
        new String[] {"{\"query\":\"q\",\"memoryKind\":[]}", "memoryKind"},
        new String[] {
          "{\"query\":\"q\",\"after\":\"2030-02-01T00:00:00Z\",\"before\":\"2030-01-01T00:00:00Z\"}",
          "before"
        },
        new String[] {"{\"query\":\"q\",\"mode\":\"semantic\"}", "mode"},
        new String[] {"{\"query\":\"q\",\"top_k\":5}", "top_k"});
    for (String[] c : cases) {
      assertRefused(memories.retrieve(c[0]), 400, c[1]);
    }
  }

  @Test
  void badEventsAndControlBodiesAreRefused() {
    long events = stored("business_events");
    long before = stored("memories");
    List<String[]> cases = List.of(
        new String[] {"{\"source\":\"crm\",\"text\":\"Acme signed the renewal today\"}", "type"},
        new String[] {
          "{\"type\":\"bad type!\",\"source\":\"crm\",\"text\":\"Acme signed the renewal\"}", "type"
        },
        new String[] {"{\"type\":\"deal.won\",\"text\":\"Acme signed the renewal today\"}", "source"
        },
        new String[] {"{\"type\":\"deal.won\",\"source\":\"crm\"}", "text"},
        new String[] {
          "{\"type\":\"deal.won\",\"source\":\"crm\",\"text\":\"Acme signed it\",\"metadata\":\"x\"}",
          "metadata"
        },
        new String[] {
          "{\"type\":\"deal.won\",\"source\":\"crm\",\"text\":\"Acme signed the renewal\","
              + "\"metadata\":{\"memoryKind\":\"rumour\"}}",
          "memoryKind"
        },
        new String[] {
          "{\"type\":\"deal.won\",\"source\":\"crm\",\"text\":\"Acme signed the renewal\","
              + "\"metadata\":{\"confidence\":7}}",
          "confidence"
        });
    for (String[] c : cases) {
      assertRefused(memories.send("POST", "/events", c[0]), 400, c[1]);
    }
    assertThat(stored("business_events")).isEqualTo(events);
    assertThat(stored("memories")).isEqualTo(before);

    assertRefused(memories.control(existing, "reinforce", "{\"why\":\"typo\"}"), 400, "why");
    assertRefused(
        memories.control(existing, "suppress", "{\"reason\":\"" + "r".repeat(1001) + "\"}"),
        400,
        "reason");
    assertThat(memories.get(existing).json().get("state").asText()).isEqualTo("durable");
    assertThat(memories.get(existing).json().get("reinforcementCount").asInt()).isZero();
    Http.Response page = memories.send("GET", "/candidates?limit=0", null);
    assertRefused(page, 400, "limit");
    assertThat(memories.get("mem_doesnotexist").status()).isEqualTo(404);
  }
}
