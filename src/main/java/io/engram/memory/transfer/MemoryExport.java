package io.engram.memory.transfer;

import io.engram.memory.AgentScope;
import io.engram.memory.MemoryHistory;
import io.engram.memory.MemoryReads;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemoryStore;
import io.engram.memory.MemoryStores;
import io.engram.memory.MemoryViews;
import io.engram.memory.Transition;
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

  /** What an export asks for: its memories, where it starts and how many it takes. */
  record Request(MemoryStore.Filter filter, String after, long limit, boolean embeddings) {}

  private final MemoryStore store;
  private final MemoryHistory history;

  MemoryExport(MemoryStores stores) {
    this.store = stores.memories();
    this.history = stores.history();
  }

  /** Writes the export to {@code out}; how many memories it held. */
  long write(String orgId, AgentScope scope, Request request, OutputStream out) throws IOException {
    long count = 0;
    String cursor = request.after();
    boolean more = false;
    while (true) {
      List<MemoryRecord> page = store.exportPage(orgId, scope, request.filter(), cursor, PAGE);
      if (page.isEmpty()) {
        break;
      }
      // Metadata conditions are checked here, on the page's rows (as a list does).
      List<MemoryRecord> kept = page.stream()
          .filter(m -> !m.text().equals(MemoryStore.ERASED_TEXT)) // nothing left to carry
          .filter(m -> MemoryReads.meets(request.filter().metadata(), m))
          .toList();
      Map<String, List<Transition>> transitions =
          history.transitions(kept.stream().map(MemoryRecord::id).toList());
      for (MemoryRecord memory : kept) {
        if (count == request.limit()) {
          more = true;
          break;
        }
        out.write(Json.write(MemoryViews.exported(
                memory, request.embeddings(), transitions.getOrDefault(memory.id(), List.of())))
            .getBytes(StandardCharsets.UTF_8));
        out.write('\n');
        count++;
        cursor = memory.id();
      }
      out.flush();
      if (more || page.size() < PAGE) {
        break;
      }
      if (count < request.limit() || kept.isEmpty()) {
        cursor = page.getLast().id(); // past rows the metadata left out, too
      }
    }
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
