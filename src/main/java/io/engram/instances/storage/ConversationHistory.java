package io.engram.instances.storage;

import io.engram.organizations.InstanceStore;
import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.store.Database;
import io.engram.store.DatabaseFailures;
import io.engram.store.Rows;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jdbi.v3.core.mapper.RowMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The conversation history of organizations: each chat exchange the gateway answered (the
 * client's messages, the answer, model, usage, time), kept in the organization's default
 * instance. A request never waits on it: exchanges are queued and written in batches every second
 * ({@link #flush}, from housekeeping and at shutdown), as usage is. An exchange that would take
 * the organization past its storage allowance is not kept (and counted as dropped): a
 * full allowance never fails a chat.
 */
public final class ConversationHistory {
  private static final Logger LOG = LoggerFactory.getLogger(ConversationHistory.class);
  static final int BATCH = 500;

  /** What the gateway answered: the client's messages (as JSON), the answer, model and usage. */
  public record Answered(
      String credentialId,
      String endUser,
      String requestId,
      String model,
      String messages,
      String answer,
      int promptTokens,
      int completionTokens,
      int memoryTokens) {
    /**
     * A model may answer with NUL characters (an untrained local one does), which a PostgreSQL
     * text column refuses: kept as U+FFFD, the replacement character. The client's messages are
     * JSON, where a NUL is already the escape {@code \u0000}.
     */
    public Answered {
      if (answer.indexOf('\0') >= 0) {
        answer = answer.replace('\0', '\uFFFD');
      }
    }

    /** What the exchange counts in conversation_history_gb: its messages and answer. */
    long bytes() {
      return messages.getBytes(StandardCharsets.UTF_8).length
          + (long) answer.getBytes(StandardCharsets.UTF_8).length;
    }
  }

  /** An exchange as kept, in the instance it was kept in. */
  public record Stored(
      String id, String instanceId, Answered answered, long bytes, Instant createdAt) {}

  private record Queued(String id, Organization org, Answered answered, Instant at) {}

  private static final RowMapper<Stored> STORED = (rs, ctx) -> new Stored(
      rs.getString("id"),
      rs.getString("instance_id"),
      new Answered(
          rs.getString("credential_id"),
          rs.getString("end_user_id"),
          rs.getString("request_id"),
          rs.getString("model"),
          rs.getString("messages"),
          rs.getString("answer"),
          rs.getInt("prompt_tokens"),
          rs.getInt("completion_tokens"),
          rs.getInt("memory_tokens")),
      rs.getLong("bytes"),
      Rows.instant(rs, "created_at"));

  private final Database db;
  private final InstanceStore instances;
  private final StorageUsage usage;
  private final Clock clock;
  private final ConcurrentLinkedQueue<Queued> queued = new ConcurrentLinkedQueue<>();
  private final Counter kept;
  private final Counter dropped;
  private final Counter refused;

  public ConversationHistory(
      Database db,
      InstanceStore instances,
      StorageUsage usage,
      MeterRegistry registry,
      Clock clock) {
    this.kept = exchanges(registry, "kept");
    this.dropped = exchanges(registry, "dropped");
    this.refused = exchanges(registry, "refused");
    this.db = db;
    this.instances = instances;
    this.usage = usage;
    this.clock = clock;
  }

  private static Counter exchanges(MeterRegistry registry, String outcome) {
    return Counter.builder("engram.conversation.history.exchanges")
        .description("Chat exchanges written to conversation history, dropped (allowance full)"
            + " or refused (the database rejects what one holds)")
        .tag("outcome", outcome)
        .register(registry);
  }

  /** Queues an exchange to keep; written by the next {@link #flush}. */
  public void record(Organization org, Answered answered) {
    Instant now = clock.instant();
    queued.add(new Queued(Ids.newId("conv", now.toEpochMilli()), org, answered, now));
  }

  /**
   * Writes what was queued when it started, a batch per transaction; returns how many were kept. A
   * batch the database could not take goes back in the queue for the next flush, not this one: a
   * write that keeps failing must not turn a flush into an endless loop. An exchange the database
   * refuses for what it holds is dropped alone ({@link #insert}).
   */
  public int flush() {
    int kept = 0;
    int left = queued.size();
    while (left > 0) {
      List<Queued> batch = new ArrayList<>(BATCH);
      Queued next;
      while (batch.size() < Math.min(BATCH, left) && (next = queued.poll()) != null) {
        batch.add(next);
      }
      if (batch.isEmpty()) {
        break;
      }
      left -= batch.size();
      kept += write(batch);
    }
    return kept;
  }

  private int write(List<Queued> batch) {
    Map<String, String> instanceOf = new HashMap<>();
    Map<String, Long> room = new HashMap<>();
    try {
      for (Queued exchange : batch) {
        String orgId = exchange.org().id();
        instanceOf.computeIfAbsent(orgId, id -> instances.defaultOf(id).id());
        room.computeIfAbsent(orgId, id -> {
          OptionalLong allowance = usage.limits(exchange.org()).bytes();
          return allowance.isEmpty() ? Long.MAX_VALUE : allowance.getAsLong() - usage.kept(id);
        });
      }
    } catch (RuntimeException e) {
      // The batch was taken from the queue: it goes back rather than being lost with the flush.
      return requeue(batch, e);
    }
    List<Queued> keep = new ArrayList<>(batch.size());
    for (Queued exchange : batch) {
      long left = room.get(exchange.org().id()) - exchange.answered().bytes();
      if (left < 0) {
        dropped.increment();
        continue;
      }
      room.put(exchange.org().id(), left);
      keep.add(exchange);
    }
    if (keep.isEmpty()) {
      return 0;
    }
    return insert(keep, instanceOf);
  }

  /**
   * Inserts the exchanges in one transaction. When the database refused them for what one of them
   * holds, the batch is split in halves until that one is alone, and it alone is dropped (counted
   * and logged by id, never by content): the others are kept. When the database itself failed,
   * they all go back in the queue for the next flush: a database hiccup loses nothing.
   */
  private int insert(List<Queued> rows, Map<String, String> instanceOf) {
    try {
      db.write(h -> {
        var insert = h.prepareBatch("""
            INSERT INTO conversation_exchanges (id, org_id, instance_id, credential_id, end_user_id,
              request_id, model, messages, answer, prompt_tokens, completion_tokens, memory_tokens,
              bytes, created_at)
            VALUES (:id, :org, :instance, :credential, :endUser, :request, :model, :messages,
              :answer, :prompt, :completion, :memory, :bytes, :at)""");
        for (Queued q : rows) {
          Answered e = q.answered();
          insert
              .bind("id", q.id())
              .bind("org", q.org().id())
              .bind("instance", instanceOf.get(q.org().id()))
              .bind("credential", e.credentialId())
              .bind("endUser", e.endUser())
              .bind("request", e.requestId())
              .bind("model", e.model())
              .bind("messages", e.messages())
              .bind("answer", e.answer())
              .bind("prompt", e.promptTokens())
              .bind("completion", e.completionTokens())
              .bind("memory", e.memoryTokens())
              .bind("bytes", e.bytes())
              .bind("at", q.at().toEpochMilli())
              .add();
        }
        return insert.execute();
      });
    } catch (RuntimeException e) {
      if (DatabaseFailures.isTransient(e)) {
        return requeue(rows, e);
      }
      if (rows.size() == 1) {
        refused.increment();
        LOG.error(
            "conversation exchange {} of organization {} cannot be stored and is dropped: {}",
            rows.getFirst().id(),
            rows.getFirst().org().id(),
            e.getMessage());
        return 0;
      }
      int half = rows.size() / 2;
      return insert(rows.subList(0, half), instanceOf)
          + insert(rows.subList(half, rows.size()), instanceOf);
    }
    kept.increment(rows.size());
    return rows.size();
  }

  /** Puts exchanges back in the queue for the next flush; none was kept. */
  private int requeue(List<Queued> exchanges, RuntimeException failure) {
    queued.addAll(exchanges);
    LOG.warn("conversation history not written yet ({} exchanges queued)", queued.size(), failure);
    return 0;
  }

  /** A page of the instance's exchanges, newest first, before {@code before} when given. */
  public List<Stored> page(String instanceId, String before, int limit) {
    return db.read(
        h -> h.createQuery("SELECT * FROM conversation_exchanges WHERE instance_id = :instance"
                + (before == null ? "" : " AND id < :before")
                + " ORDER BY id DESC LIMIT :limit")
            .bind("instance", instanceId)
            .bindMap(before == null ? Map.of() : Map.of("before", before))
            .bind("limit", limit)
            .map(STORED)
            .list());
  }

  public Stored get(String instanceId, String id) {
    return db.read(h -> h.createQuery(
                "SELECT * FROM conversation_exchanges WHERE instance_id = :instance AND id = :id")
            .bind("instance", instanceId)
            .bind("id", id)
            .map(STORED)
            .findOne())
        .orElseThrow(() -> ApiException.notFound(
            "conversation_not_found", "conversation_id", "No conversation exchange " + id));
  }

  /** An exchange as retention sees it: where, when, how big. */
  public record Kept(String id, String instanceId, Instant createdAt, long bytes) {}

  /** Every exchange the organization keeps, without their text. */
  public List<Kept> forRetention(String orgId) {
    return db.read(h -> h.createQuery(
            "SELECT id, instance_id, created_at, bytes FROM conversation_exchanges "
                + "WHERE org_id = :org")
        .bind("org", orgId)
        .map((rs, ctx) -> new Kept(
            rs.getString("id"),
            rs.getString("instance_id"),
            Rows.instant(rs, "created_at"),
            rs.getLong("bytes")))
        .list());
  }

  /** Deletes every exchange of an organization's end user (an erasure); how many. */
  public int deleteOf(String orgId, String endUser) {
    return db.write(h -> h.createUpdate(
            "DELETE FROM conversation_exchanges WHERE org_id = :org AND end_user_id = :user")
        .bind("org", orgId)
        .bind("user", endUser)
        .execute());
  }

  public void delete(String instanceId, String id) {
    int deleted = db.write(h -> h.createUpdate(
            "DELETE FROM conversation_exchanges WHERE instance_id = :instance AND id = :id")
        .bind("instance", instanceId)
        .bind("id", id)
        .execute());
    if (deleted == 0) {
      throw ApiException.notFound(
          "conversation_not_found", "conversation_id", "No conversation exchange " + id);
    }
  }
}
