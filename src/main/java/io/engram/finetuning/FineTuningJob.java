package io.engram.finetuning;

import java.time.Instant;

/**
 * A fine-tuning job as stored: OpenAI's statuses ({@code validating_files}, {@code queued},
 * {@code running}, {@code succeeded}, {@code failed}, {@code cancelled}) and the hyperparameters
 * as resolved when it was created (JSON).
 */
public record FineTuningJob(
    String id,
    String orgId,
    String instanceId,
    String model,
    String trainingFile,
    String validationFile,
    String hyperparameters,
    String suffix,
    long seed,
    String status,
    String fineTunedModel,
    Long trainedTokens,
    String errorCode,
    String errorMessage,
    String errorParam,
    boolean cancelRequested,
    Instant createdAt,
    Instant startedAt,
    Instant finishedAt,
    String trainer,
    String remoteJobId,
    String remoteEvent) {
  public static final String LOCAL = "local";
  public static final String UPSTREAM = "upstream";

  public static final String VALIDATING = "validating_files";
  public static final String QUEUED = "queued";
  public static final String RUNNING = "running";
  public static final String SUCCEEDED = "succeeded";
  public static final String FAILED = "failed";
  public static final String CANCELLED = "cancelled";

  public boolean finished() {
    return status.equals(SUCCEEDED) || status.equals(FAILED) || status.equals(CANCELLED);
  }
}
