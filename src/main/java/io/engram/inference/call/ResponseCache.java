package io.engram.inference.call;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.platform.Digests;
import io.engram.platform.json.Json;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Answers kept per organization on this node, for requests that ask the same of the same model
 * with the same memory: the key is a digest of the client's model, the messages as the model gets
 * them (the memory block Engram put in them included), the ids and versions of the memories in
 * it (so an answer is never served again once a memory it stood on was edited, suppressed or
 * forgotten), the prompt, the sampling parameters as sent and every other parameter passed on.
 * An organization's entries are held to {@link #BYTES_PER_ORGANIZATION} (the least recently used
 * go first), the node's to its {@code ENGRAM_RESPONSE_CACHE_MB} (the organization holding the most
 * gives up its least recently used first), and each lives its organization's {@code
 * cache.ttl_seconds} (a sweep drops the expired ones nobody asked for again); an answer larger
 * than {@link #MAX_ENTRY_BYTES} is not kept. Never shared between organizations (each has its own
 * shelf).
 */
public final class ResponseCache {
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
  private final class Shelf {
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long bytes;

    synchronized Entry get(String key, long now) {
      Entry entry = entries.get(key);
      if (entry != null && entry.expiresAtMillis() <= now) {
        drop(entries.remove(key));
        return null;
      }
      return entry;
    }

    synchronized void put(String key, Entry entry) {
      Entry replaced = entries.put(key, entry);
      bytes += entry.bytes();
      held.addAndGet(entry.bytes());
      if (replaced != null) {
        drop(replaced);
      }
      while (bytes > BYTES_PER_ORGANIZATION && evictOldest()) {
        // the least recently used go first
      }
    }

    /** Drops the least recently used answer; false when there is none. */
    synchronized boolean evictOldest() {
      Iterator<Entry> oldest = entries.values().iterator();
      if (!oldest.hasNext()) {
        return false;
      }
      Entry evicted = oldest.next();
      oldest.remove();
      drop(evicted);
      return true;
    }

    /** Drops the answers past their time; whether the shelf is empty now. */
    synchronized boolean sweep(long now) {
      entries.values().removeIf(entry -> {
        if (entry.expiresAtMillis() <= now) {
          drop(entry);
          return true;
        }
        return false;
      });
      return entries.isEmpty();
    }

    synchronized long bytes() {
      return bytes;
    }

    private void drop(Entry entry) {
      bytes -= entry.bytes();
      held.addAndGet(-entry.bytes());
    }
  }

  private final Map<String, Shelf> shelves = new ConcurrentHashMap<>();
  private final AtomicLong held = new AtomicLong();
  private final long nodeBytes;
  private final Clock clock;

  /** @param nodeBytes what every organization's answers together may take on this node */
  public ResponseCache(long nodeBytes, Clock clock, MeterRegistry registry) {
    this.nodeBytes = nodeBytes;
    this.clock = clock;
    Gauge.builder("engram_inference_cache_bytes", held, AtomicLong::get)
        .description("What the response cache's answers take on this node")
        .register(registry);
  }

  /**
   * Drops every answer the organization has on this node (an erasure: an answer may repeat what
   * was erased, or what the erased user asked); how many it dropped.
   */
  public int forget(String orgId) {
    Shelf shelf = shelves.remove(orgId);
    if (shelf == null) {
      return 0;
    }
    synchronized (shelf) {
      int count = shelf.entries.size();
      while (shelf.evictOldest()) {
        // each drop gives its bytes back to the node's count
      }
      return count;
    }
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
    if (entry.bytes() > MAX_ENTRY_BYTES || entry.bytes() > nodeBytes) {
      return false;
    }
    // Inside the map's lock for the organization: the sweep never drops a shelf being filled.
    shelves.compute(orgId, (id, shelf) -> {
      Shelf kept = shelf == null ? new Shelf() : shelf;
      kept.put(key, entry);
      return kept;
    });
    while (held.get() > nodeBytes && evictFromTheLargest()) {
      // the organization holding the most gives way first
    }
    return true;
  }

  /** Drops the least recently used answer of the organization holding the most; false: none. */
  private boolean evictFromTheLargest() {
    Shelf largest = null;
    long most = 0;
    for (Shelf shelf : shelves.values()) {
      long bytes = shelf.bytes();
      if (bytes > most) {
        most = bytes;
        largest = shelf;
      }
    }
    return largest != null && largest.evictOldest();
  }

  /** Drops every answer past its time, and the shelves left empty (a job, every minute). */
  public void sweep() {
    long now = clock.millis();
    for (String orgId : shelves.keySet()) {
      shelves.computeIfPresent(orgId, (id, shelf) -> shelf.sweep(now) ? null : shelf);
    }
  }

  /** What the kept answers take on this node. */
  long bytes() {
    return held.get();
  }

  /**
   * The request's key: a SHA-256 of its canonical form (objects' fields sorted, so the same request
   * written in another order is the same request) with the ids and versions of the memories
   * injected into it (the block's text alone could stay the same across an edit of what it does
   * not show). The stream flag and the end user are left out: they change how the answer is
   * delivered, not what it is.
   */
  static String key(String model, GenerationRequest request, List<String> memories) {
    ObjectNode material = Json.MAPPER.createObjectNode();
    material.put("model", model);
    memories.forEach(material.putArray("memories")::add);
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
