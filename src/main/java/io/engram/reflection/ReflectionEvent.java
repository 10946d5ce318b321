package io.engram.reflection;

import io.engram.platform.WireNames;
import java.time.Instant;

/**
 * What one run did (or, in a dry run, proposed) to one memory: applied, proposed, or skipped
 * because the memory changed between planning and applying. Before and after are JSON snapshots.
 */
public record ReflectionEvent(
    long seq,
    String id,
    String runId,
    String orgId,
    ChangeKind change,
    String memoryId,
    String relatedMemoryId,
    Outcome outcome,
    String reason,
    String beforeJson,
    String afterJson,
    Instant at,
    Instant undoneAt,
    String undoneBy) {

  public enum Outcome {
    APPLIED,
    PROPOSED,
    SKIPPED;

    public String id() {
      return WireNames.of(this);
    }
  }
}
