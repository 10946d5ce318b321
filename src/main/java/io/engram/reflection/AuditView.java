package io.engram.reflection;

import io.engram.memory.Activation;
import io.engram.memory.MemoryRecord;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** What an audit shows of a memory before and after a change: its state, confidence, uses and activation. */
final class AuditView {
  private AuditView() {}

  static Map<String, Object> of(MemoryRecord m, Instant at) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("state", m.state().id());
    view.put("confidence", m.confidence());
    view.put("useCount", m.uses().count());
    view.put("reinforcementCount", m.counts().reinforcements());
    view.put("retrievalCount", m.counts().retrievals());
    view.put(
        "activation",
        Math.round(Activation.normalized(Activation.baseLevel(m.uses(), at)) * 10_000) / 10_000.0);
    view.put("lastUsedAt", m.uses().lastUsedAt().toString());
    return view;
  }
}
