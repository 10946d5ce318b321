package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Stored responses, per organization: each keeps the whole conversation up to its answer, so a
 * {@code previous_response_id} continues it with one read, and the response object for
 * {@code GET /v1/responses/{id}}. A message's tool calls or the call it answers are kept with it
 * ({@code tooling}), so function_call_output items can answer calls made in an earlier response.
 */
final class ResponseStore {
  private final Database db;

  ResponseStore(Database db) {
    this.db = db;
  }

  void save(
      String orgId,
      String credentialId,
      String endUser,
      String id,
      List<ChatMessage> conversation,
      JsonNode response,
      Instant at) {
    var messages = Json.MAPPER.createArrayNode();
    conversation.forEach(m -> {
      var stored = messages.addObject().put("role", m.role()).put("content", m.content());
      if (m.tooling() != null) {
        stored.set("tooling", m.tooling());
      }
    });
    db.write(h -> h.createUpdate("""
            INSERT INTO responses (id, org_id, credential_id, end_user_id, conversation, response,
                                   created_at)
            VALUES (:id, :org, :credential, :endUser, :conversation, :response, :at)""")
        .bind("id", id)
        .bind("org", orgId)
        .bind("credential", credentialId)
        .bind("endUser", endUser)
        .bind("conversation", Json.write(messages))
        .bind("response", Json.write(response))
        .bind("at", at.toEpochMilli())
        .execute());
  }

  /** Deletes the stored responses of an organization's end user (an erasure); how many. */
  int forget(String orgId, String endUser) {
    return db.write(
        h -> h.createUpdate("DELETE FROM responses WHERE org_id = :org AND end_user_id = :user")
            .bind("org", orgId)
            .bind("user", endUser)
            .execute());
  }

  /** The conversation a stored response ended, for the organization; empty when it has none. */
  Optional<List<ChatMessage>> conversation(String orgId, String id) {
    return column(orgId, id, "conversation").map(text -> {
      List<ChatMessage> messages = new ArrayList<>();
      Json.read(text, JsonNode.class)
          .forEach(m -> messages.add(new ChatMessage(
              m.path("role").asText(),
              m.path("content").isNull() ? null : m.path("content").asText(),
              m.get("tooling") instanceof ObjectNode tooling ? tooling : null)));
      return List.copyOf(messages);
    });
  }

  Optional<JsonNode> response(String orgId, String id) {
    return column(orgId, id, "response").map(text -> Json.read(text, JsonNode.class));
  }

  /** Deletes the responses stored before {@code cutoff}; how many went. */
  int purgeBefore(Instant cutoff) {
    return db.write(h -> h.createUpdate("DELETE FROM responses WHERE created_at < :cutoff")
        .bind("cutoff", cutoff.toEpochMilli())
        .execute());
  }

  boolean delete(String orgId, String id) {
    return db.write(h -> h.createUpdate("DELETE FROM responses WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .execute())
        == 1;
  }

  private Optional<String> column(String orgId, String id, String column) {
    return db.read(
        h -> h.createQuery("SELECT " + column + " FROM responses WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .mapTo(String.class)
            .findOne());
  }
}
