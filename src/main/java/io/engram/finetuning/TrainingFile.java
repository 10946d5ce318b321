package io.engram.finetuning;

import java.time.Instant;

/**
 * A file uploaded for fine-tuning: its bytes are a file of the organization's default instance
 * ({@code path}, under training_data/), its status {@code processed} when every line is a usable
 * example and {@code error} otherwise, with the problems found ({@code problems}, JSON).
 */
public record TrainingFile(
    String id,
    String orgId,
    String instanceId,
    String path,
    String filename,
    String purpose,
    long bytes,
    String status,
    int examples,
    String problems,
    Instant createdAt) {
  public static final String PURPOSE = "fine-tune";
  public static final String PROCESSED = "processed";
  public static final String ERROR = "error";
}
