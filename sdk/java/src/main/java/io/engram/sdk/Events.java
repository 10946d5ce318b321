package io.engram.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.Map;

/**
 * Business events ({@code engram.memory().events()}), as the spec and the other SDKs name them:
 * {@code events.ingest(...)} feeds one to the pipeline, {@code events.list(...)} reads them back.
 */
public final class Events {
  private final Engram client;

  Events(Engram client) {
    this.client = client;
  }

  /** Feeds a business event to the pipeline; it may stage memory candidates. */
  public JsonNode ingest(Map<String, Object> event, String agent) {
    return client.request("POST", Memory.base(agent) + "/events", event);
  }

  /** The events, newest first; {@code type} filters (null: all). */
  public Iterable<JsonNode> list(String type, String agent) {
    Map<String, Object> query = new HashMap<>();
    if (type != null) {
      query.put("type", type);
    }
    return client.paginate(Memory.base(agent) + "/events", query, "before", "nextBefore");
  }
}
