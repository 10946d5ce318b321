package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.List;

/** A Server-Sent Events body as the tests read it: its data lines, and its JSON chunks. */
public final class Sse {
  private Sse() {}

  /** The data lines of an SSE body, in order ("[DONE]" included). */
  public static List<String> events(String body) {
    List<String> data = new ArrayList<>();
    for (String line : body.split("\n")) {
      if (line.startsWith("data: ")) {
        data.add(line.substring(6));
      }
    }
    return data;
  }

  /** The JSON payloads of an SSE body, [DONE] left out. */
  public static List<JsonNode> chunks(String body) {
    return events(body).stream()
        .filter(d -> !d.equals("[DONE]"))
        .map(d -> Json.read(d, JsonNode.class))
        .toList();
  }
}
