package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/memory/erasures/{id}/verify} answers false whenever what it vouches for does not
 * hold: a receipt altered, content back in a memory row, a reason back on a transition, the text
 * back on the event that staged a memory, a replay of its encode, a document back in the index;
 * and true again once it holds. The receipt lists the snapshots that may hold
 * the erased memories, not one taken before any of them existed.
 */
class ErasureVerificationTest {

  @Test
  void verificationIsFalseWheneverWhatTheReceiptVouchesForDoesNotHold() throws Exception {
    try (TestServer server = TestServer.start()) {
      String org = server.createOrganization("growth");
      String token = server.tokenWithEveryScope(org);
      String nano = server
          .asOperator(server.http.get("/v1/organizations/" + org + "/instances"))
          .json()
          .at("/data/0/id")
          .asText();
      String before = snapshot(server, nano);
      server.clock.advance(Duration.ofMinutes(1));
      List<String> ids = new ArrayList<>();
      for (String text : List.of(
          "The vault code is 4471", "The vault is in the basement", "Only Ana opens the vault")) {
        Http.Response written = server
            .http
            .post("/v1/memory")
            .bearer(token)
            .json("{\"text\":\"" + text + "\"}")
            .send();
        assertThat(written.status()).as(written.text()).isEqualTo(201);
        ids.add(written.json().get("id").asText());
      }
      MemoryRecord kept =
          server.engram.memory().stores().memories().find(org, ids.get(0)).orElseThrow();
      server.clock.advance(Duration.ofMinutes(1));
      String holding = snapshot(server, nano);
      server.clock.advance(Duration.ofMinutes(1));

      Http.Response started = server
          .http
          .post("/v1/memory/erase")
          .bearer(token)
          .json("{\"everything\":true}")
          .send();
      assertThat(started.status()).as(started.text()).isEqualTo(202);
      String erasure = started.json().get("id").asText();
      JsonNode done = Erasing.completed(server, token, "/v1/memory/erasures/" + erasure);
      List<String> listed = new ArrayList<>();
      done.at("/receipt/stillHolding").forEach(s -> listed.add(s.get("id").asText()));
      assertThat(listed)
          .as("snapshots that may hold the erased memories")
          .contains(holding)
          .doesNotContain(before);
      assertThat(verify(server, token, erasure).get("verified").asBoolean()).isTrue();

      String memory = ids.get(1);
      tamper(
          server, "UPDATE memories SET text = 'The vault is in the basement' WHERE id = ?", memory);
      JsonNode content = verify(server, token, erasure);
      assertThat(content.get("verified").asBoolean()).isFalse();
      assertThat(content.get("holdingContent").toString()).contains(memory);
      tamper(server, "UPDATE memories SET text = '' WHERE id = ?", memory);

      tamper(
          server,
          "UPDATE memory_transitions SET reason = 'said the code' WHERE memory_id = ?",
          memory);
      JsonNode reason = verify(server, token, erasure);
      assertThat(reason.get("verified").asBoolean()).isFalse();
      assertThat(reason.at("/leftBehind/memory_transitions").toString()).contains(memory);
      tamper(server, "UPDATE memory_transitions SET reason = NULL WHERE memory_id = ?", memory);
      assertThat(verify(server, token, erasure).get("verified").asBoolean()).isTrue();

      // The event that staged a memory, holding its text again; a replay of its encode.
      tamper(
          server,
          "INSERT INTO business_events (id, org_id, type, source, text, staging, received_at)"
              + " VALUES ('evt_tampered', ?, 'note', 'test', 'The vault code is 4471', '{}', 0)",
          org);
      tamper(server, "UPDATE memories SET event_id = 'evt_tampered' WHERE id = ?", memory);
      tamper(
          server,
          "INSERT INTO memory_idempotency (org_id, credential_id, idempotency_key, request_hash,"
              + " memory_id, response, created_at, expires_at)"
              + " VALUES (?, 'cred', 'key', 'hash', ?, '{}', 0, 0)",
          org,
          memory);
      JsonNode rows = verify(server, token, erasure);
      assertThat(rows.get("verified").asBoolean()).isFalse();
      assertThat(rows.at("/leftBehind/business_events").toString()).contains(memory);
      assertThat(rows.at("/leftBehind/memory_idempotency").toString()).contains(memory);
      tamper(server, "UPDATE business_events SET text = '' WHERE id = ?", "evt_tampered");
      tamper(server, "DELETE FROM memory_idempotency WHERE memory_id = ?", memory);
      assertThat(verify(server, token, erasure).get("verified").asBoolean()).isTrue();

      server.engram.memory().index().added(kept);
      server.engram.memory().index().refresh();
      JsonNode indexed = verify(server, token, erasure);
      assertThat(indexed.get("verified").asBoolean()).isFalse();
      assertThat(indexed.get("stillIndexed").toString()).contains(kept.id());
      server.engram.memory().index().sync(kept.id());
      server.engram.memory().index().refresh();
      assertThat(verify(server, token, erasure).get("verified").asBoolean()).isTrue();

      tamper(
          server,
          "UPDATE memory_erasures SET receipt = replace(receipt, '\"count\":3', '\"count\":2')"
              + " WHERE id = ?",
          erasure);
      JsonNode altered = verify(server, token, erasure);
      assertThat(altered.get("verified").asBoolean()).as(altered.toString()).isFalse();
      assertThat(altered.get("digestMatches").asBoolean()).isFalse();
    }
  }

  private static String snapshot(TestServer server, String nano) {
    Http.Response taken = server.asOperator(
        server.http.post("/v1/nano/" + nano + "/snapshot").json("{\"retention_days\":3}"));
    assertThat(taken.status()).as(taken.text()).isEqualTo(201);
    return taken.json().get("id").asText();
  }

  private static JsonNode verify(TestServer server, String token, String erasure) {
    Http.Response check = server
        .http
        .post("/v1/memory/erasures/" + erasure + "/verify")
        .bearer(token)
        .send();
    assertThat(check.status()).as(check.text()).isEqualTo(200);
    return check.json();
  }

  /** Changes the database behind the server's back, as a faulty tool or an intruder could. */
  private static void tamper(TestServer server, String sql, String... values) throws SQLException {
    try (Connection connection = DriverManager.getConnection(server.jdbcUrl());
        PreparedStatement statement = connection.prepareStatement(sql)) {
      for (int i = 0; i < values.length; i++) {
        statement.setString(i + 1, values[i]);
      }
      assertThat(statement.executeUpdate()).as(sql).isPositive();
    }
  }
}
