package io.engram.actions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.alerts.AlertChannels;
import io.engram.alerts.WebhookSender;
import io.engram.capabilities.CapabilityHandler;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;

/**
 * The built-in handlers of reminders ({@code set_reminders}) and tasks ({@code manage_tasks}):
 * kept by Engram per assistant, with due times. A reminder that falls due is delivered once, on
 * the organization's webhooks (its alert channels), as a signed {@code reminder.due} event; with
 * several nodes, a conditional update makes exactly one of them deliver it.
 */
public final class Reminders {
  static final int MAX_OPEN_TASKS_LISTED = 100;

  private final Database db;
  private final Clock clock;

  public Reminders(Database db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  public List<CapabilityHandler> handlers() {
    return List.of(
        MemoryHandlers.handler("set_reminders", this::remind),
        MemoryHandlers.handler("manage_tasks", this::tasks));
  }

  private JsonNode remind(CapabilityHandler.Invocation call) {
    Instant due = due(call.arguments().path("due_at").asText(), "due_at");
    if (!due.isAfter(clock.instant())) {
      throw ApiException.badRequest(
          "due_at", "A reminder is due in the future; " + due + " is past");
    }
    String id = insert(call, "reminder", call.arguments().path("text").asText(), due);
    return Json.MAPPER
        .createObjectNode()
        .put("reminder_id", id)
        .put("due_at", due.toString())
        .put("delivery", "on the organization's webhooks when due");
  }

  private JsonNode tasks(CapabilityHandler.Invocation call) {
    JsonNode args = call.arguments();
    return switch (args.path("action").asText()) {
      case "create" -> {
        if (!args.hasNonNull("title")) {
          throw ApiException.badRequest("title", "Creating a task needs its title");
        }
        Instant due = args.hasNonNull("due_at") ? due(args.get("due_at").asText(), "due_at") : null;
        yield Json.MAPPER
            .createObjectNode()
            .put("task_id", insert(call, "task", args.get("title").asText(), due));
      }
      case "complete" -> complete(call, args.path("task_id").asText());
      default -> list(call);
    };
  }

  private JsonNode complete(CapabilityHandler.Invocation call, String taskId) {
    int closed = db.write(h -> h.createUpdate("""
            UPDATE assistant_items SET status = 'done', closed_at = :at
            WHERE org_id = :org AND assistant_id = :assistant AND kind = 'task' AND id = :id
              AND status = 'open'""")
        .bind("at", clock.millis())
        .bind("org", call.orgId())
        .bind("assistant", call.assistantId())
        .bind("id", taskId)
        .execute());
    if (closed == 0) {
      throw ApiException.badRequest("task_id", "No open task " + taskId + " of this assistant");
    }
    return Json.MAPPER.createObjectNode().put("task_id", taskId).put("status", "done");
  }

  private JsonNode list(CapabilityHandler.Invocation call) {
    ObjectNode result = Json.MAPPER.createObjectNode();
    ArrayNode open = result.putArray("open_tasks");
    db.read(h -> h.createQuery("""
                SELECT id, text, due_at FROM assistant_items
                WHERE org_id = :org AND assistant_id = :assistant AND kind = 'task'
                  AND status = 'open'
                ORDER BY id LIMIT :limit""")
            .bind("org", call.orgId())
            .bind("assistant", call.assistantId())
            .bind("limit", MAX_OPEN_TASKS_LISTED)
            .mapToMap()
            .list())
        .forEach(row -> {
          ObjectNode task = open.addObject()
              .put("task_id", (String) row.get("id"))
              .put("title", (String) row.get("text"));
          Object dueAt = row.get("due_at");
          task.put(
              "due_at",
              dueAt == null
                  ? null
                  : Instant.ofEpochMilli(((Number) dueAt).longValue()).toString());
        });
    return result;
  }

  private String insert(CapabilityHandler.Invocation call, String kind, String text, Instant due) {
    String id = Ids.newId(kind.equals("task") ? "task" : "rmd", clock.millis());
    db.write(h -> h.createUpdate("""
            INSERT INTO assistant_items (id, org_id, assistant_id, kind, text, due_at, status,
              created_at, tool_call_id)
            VALUES (:id, :org, :assistant, :kind, :text, :due, 'open', :at, :call)""")
        .bind("id", id)
        .bind("org", call.orgId())
        .bind("assistant", call.assistantId())
        .bind("kind", kind)
        .bind("text", text)
        .bind("due", due == null ? null : due.toEpochMilli())
        .bind("at", clock.millis())
        .bind("call", call.toolCallId())
        .execute());
    return id;
  }

  private static Instant due(String text, String field) {
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      throw ApiException.badRequest(field, "'" + field + "' must be an RFC 3339 date-time");
    }
  }

  /**
   * Delivers every reminder now due: each is claimed (open -> delivered) by one node, then sent
   * to each of its organization's webhooks. How many were delivered.
   */
  public int deliverDue(AlertChannels channels, WebhookSender webhooks) {
    long now = clock.millis();
    List<Map<String, Object>> due =
        db.read(h -> h.createQuery("""
            SELECT * FROM assistant_items
            WHERE status = 'open' AND kind = 'reminder' AND due_at <= :now
            ORDER BY due_at LIMIT 500""").bind("now", now).mapToMap().list());
    int delivered = 0;
    for (Map<String, Object> reminder : due) {
      String id = (String) reminder.get("id");
      if (!db.write(h -> claim(h, id, now))) {
        continue; // another node took it
      }
      delivered++;
      String orgId = (String) reminder.get("org_id");
      Map<String, Object> event = new LinkedHashMap<>();
      event.put("id", Ids.newId("evt", now));
      event.put("object", "event");
      event.put("type", "reminder.due");
      event.put("created", now / 1000);
      event.put("organization_id", orgId);
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("id", id);
      body.put("assistant_id", reminder.get("assistant_id"));
      body.put("text", reminder.get("text"));
      body.put(
          "due_at",
          Instant.ofEpochMilli(((Number) reminder.get("due_at")).longValue()).toString());
      event.put("reminder", body);
      channels.list(orgId).forEach(channel -> webhooks.sendLater(channel, null, event));
    }
    return delivered;
  }

  private static boolean claim(Handle h, String id, long now) {
    return h.createUpdate("""
                UPDATE assistant_items SET status = 'delivered', closed_at = :now
                WHERE id = :id AND status = 'open'""").bind("id", id).bind("now", now).execute() == 1;
  }
}
