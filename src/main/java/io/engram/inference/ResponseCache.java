package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.platform.Digests;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Answers kept per organization on this node, for requests that ask the same of the same model
 * with the same memory: the key is a digest of the client's model, the messages as the model gets
 * them (the memory block Engram put in them included, so an answer is never served again once a
 * memory it stood on was edited, suppressed or forgotten: the block differs), the prompt, the
 * sampling parameters as sent and every other parameter passed on. An organization's entries are
 * held to {@link #BYTES_PER_ORGANIZATION} (the least recently used go first) and each lives its
 * organization's {@code cache.ttl_seconds}; an answer larger than {@link #MAX_ENTRY_BYTES} is not
 * kept. Never shared between organizations (each has its own map).
 */
final class ResponseCache {
  /** What one organization's answers may take on one node. */
  static final long BYTES_PER_ORGANIZATION = 16L * 1024 * 1024;

  /** The largest answer kept (text, as UTF-16 in the heap: about twice its characters). */
  static final long MAX_ENTRY_BYTES = 512L * 1024;

  /** A kept answer: its text, why it ended, what it used, until when it may be served. */
  record Entry(String text, String finishReason, Generation.Usage usage, long expiresAtMillis) {
    long bytes() {
      return 2L * text.length() + 128;
    }
  }

  /** One organization's answers, in the order they were last used. */
  private static final class Shelf {
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long bytes;

    synchronized Entry get(String key, long now) {
      Entry entry = entries.get(key);
      if (entry != null && entry.expiresAtMillis() <= now) {
        bytes -= entries.remove(key).bytes();
        return null;
      }
      return entry;
    }

    synchronized void put(String key, Entry entry) {
      Entry replaced = entries.put(key, entry);
      bytes += entry.bytes() - (replaced == null ? 0 : replaced.bytes());
      Iterator<Entry> oldest = entries.values().iterator();
      while (bytes > BYTES_PER_ORGANIZATION && oldest.hasNext()) {
        bytes -= oldest.next().bytes();
        oldest.remove();
      }
    }
  }

  private final Map<String, Shelf> shelves = new ConcurrentHashMap<>();
  private final Clock clock;

  ResponseCache(Clock clock) {
    this.clock = clock;
  }

  /** The organization's kept answer to the request with this key, or null. */
  Entry get(String orgId, String key) {
    Shelf shelf = shelves.get(orgId);
    return shelf == null ? null : shelf.get(key, clock.millis());
  }

  /** Keeps an answer for {@code ttlSeconds}; whether it was small enough to keep. */
  boolean put(String orgId, String key, Generation generation, long ttlSeconds) {
    Entry entry = new Entry(
        generation.text(),
        generation.finishReason(),
        generation.usage(),
        clock.millis() + ttlSeconds * 1000);
    if (entry.bytes() > MAX_ENTRY_BYTES) {
      return false;
    }
    shelves.computeIfAbsent(orgId, id -> new Shelf()).put(key, entry);
    return true;
  }

  /**
   * The request's key: a SHA-256 of its canonical form (objects' fields sorted, so the same request
   * written in another order is the same request). The stream flag and the end user are left out:
   * they change how the answer is delivered, not what it is.
   */
  static String key(String model, GenerationRequest request) {
    ObjectNode material = Json.MAPPER.createObjectNode();
    material.put("model", model);
    if (request.messages() != null) {
      ArrayNode messages = material.putArray("messages");
      for (ChatMessage message : request.messages()) {
        ObjectNode node = messages.addObject().put("role", message.role());
        node.put("content", message.content());
        node.set("tooling", message.tooling());
      }
    }
    material.put("prompt", request.prompt());
    material.set("sampling", request.sampling().asSent());
    material.set("asked", request.tooling());
    return Digests.sha256(Json.write(canonical(material)));
  }

  private static JsonNode canonical(JsonNode node) {
    if (node == null) {
      return Json.MAPPER.nullNode();
    }
    if (node.isObject()) {
      Map<String, JsonNode> sorted = new TreeMap<>();
      node.properties().forEach(field -> sorted.put(field.getKey(), canonical(field.getValue())));
      ObjectNode copy = Json.MAPPER.createObjectNode();
      sorted.forEach(copy::set);
      return copy;
    }
    if (node.isArray()) {
      ArrayNode copy = Json.MAPPER.createArrayNode();
      node.forEach(item -> copy.add(canonical(item)));
      return copy;
    }
    return node;
  }
}
