package io.engram.instances.files;

import io.engram.instances.storage.InstanceViews;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * An import, export or copy of an instance's storage, run in the background. States: {@code
 * queued} (accepted, planned: every file it will carry is listed), {@code running} (a node holds
 * its lease), then {@code succeeded}, {@code failed} (with the error; the files carried before
 * stay) or {@code cancelled}. A job whose node stops is taken up again, by the same node at its
 * start or by another when the lease runs out, from the first file not yet carried (a download
 * from the byte it reached).
 */
public record StorageJob(
    String id,
    String orgId,
    String instanceId,
    Kind kind,
    String source,
    String destination,
    String destinationInstance,
    String status,
    int filesTotal,
    int filesDone,
    long bytesTotal,
    long bytesDone,
    int attempts,
    String errorCode,
    String errorMessage,
    String requestedBy,
    Instant createdAt,
    Instant startedAt,
    Instant finishedAt) {

  /** What a job carries, from where to where. */
  public enum Kind {
    /** From an object store into the instance. */
    IMPORT,
    /** From the instance to an object store. */
    EXPORT,
    /** From the instance to another instance (or itself) of the same organization. */
    COPY;

    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Kind of(String wireName) {
      return valueOf(wireName.toUpperCase(Locale.ROOT));
    }
  }

  public boolean finished() {
    return status.equals("succeeded") || status.equals("failed") || status.equals("cancelled");
  }

  public Map<String, Object> toView() {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", id);
    view.put("object", "storage.job");
    view.put("kind", kind.wireName());
    view.put("status", status);
    view.put("nano_id", instanceId);
    view.put("source", source);
    view.put("destination", destination);
    if (destinationInstance != null) {
      view.put("destination_nano", destinationInstance);
    }
    Map<String, Object> progress = new LinkedHashMap<>();
    progress.put("files_total", filesTotal);
    progress.put("files_done", filesDone);
    progress.put("bytes_total", bytesTotal);
    progress.put("bytes_done", bytesDone);
    progress.put(
        "percent",
        bytesTotal == 0
            ? (status.equals("succeeded") ? 100.0 : 0.0)
            : Math.floor(bytesDone * 1000.0 / bytesTotal) / 10);
    view.put("progress", progress);
    view.put("attempts", attempts);
    view.put(
        "error", errorCode == null ? null : Map.of("code", errorCode, "message", errorMessage));
    view.put("created_at", createdAt.getEpochSecond());
    view.put("started_at", InstanceViews.seconds(startedAt));
    view.put("finished_at", InstanceViews.seconds(finishedAt));
    return view;
  }
}
