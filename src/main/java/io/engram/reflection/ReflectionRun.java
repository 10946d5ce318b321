package io.engram.reflection;

import io.engram.platform.WireNames;
import java.time.Instant;

/** The audit of one run: who or what started it, the settings it ran with, how it went. */
public record ReflectionRun(
    String id,
    String orgId,
    Trigger trigger,
    String credentialId,
    String userId,
    String requestId,
    boolean dryRun,
    Status status,
    String settingsJson,
    String node,
    Instant startedAt,
    Instant finishedAt,
    long examined,
    String countsJson,
    String error,
    Instant undoneAt,
    String undoneBy) {

  public enum Trigger {
    SCHEDULE,
    MANUAL;

    public String id() {
      return WireNames.of(this);
    }
  }

  public enum Status {
    RUNNING,
    COMPLETED,
    FAILED;

    public String id() {
      return WireNames.of(this);
    }
  }
}
