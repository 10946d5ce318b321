package io.engram.memory;

import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A boundary's memories as JSON Lines, streamed a page at a time in id order (oldest first), so an
 * export of any size holds one page in memory. Each line is a memory's view with its uses and
 * vector ({@link MemoryViews#exported}); the last line, {@code {"object":"export.end"}}, says the
 * export is whole (a stream cut short has none) and, when {@code limit} stopped it, where the next
 * part starts ({@code nextAfter}, the {@code after} of the next request). Not a snapshot: a memory
 * written meanwhile is in it or not, and one changed meanwhile appears as it was when its page was
 * read.
 */
final class MemoryExport {
  private static final int PAGE = 500;

  /** What an export asks for: its memories' states, where it starts and how many it takes. */
  record Request(List<MemoryState> states, String after, long limit, boolean embeddings) {}

  private final MemoryStore store;

  MemoryExport(MemoryStore store) {
    this.store = store;
  }

  /** Writes the export to {@code out}; how many memories it held. */
  long write(String orgId, AgentScope scope, Request request, OutputStream out) throws IOException {
    long count = 0;
    String cursor = request.after();
    while (count < request.limit()) {
      int page = (int) Math.min(PAGE, request.limit() - count);
      List<MemoryRecord> memories = store.exportPage(orgId, scope, request.states(), cursor, page);
      for (MemoryRecord memory : memories) {
        out.write(Json.write(MemoryViews.exported(memory, request.embeddings()))
            .getBytes(StandardCharsets.UTF_8));
        out.write('\n');
      }
      count += memories.size();
      if (!memories.isEmpty()) {
        cursor = memories.getLast().id();
      }
      out.flush();
      if (memories.size() < page) {
        break;
      }
    }
    boolean more = count == request.limit()
        && !store.exportPage(orgId, scope, request.states(), cursor, 1).isEmpty();
    Map<String, Object> end = new LinkedHashMap<>();
    end.put("object", ImportLine.END);
    end.put("count", count);
    end.put("nextAfter", more ? cursor : null);
    out.write(Json.write(end).getBytes(StandardCharsets.UTF_8));
    out.write('\n');
    out.flush();
    return count;
  }
}
