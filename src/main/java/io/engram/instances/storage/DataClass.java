package io.engram.instances.storage;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * The spec's data classes of an instance's storage. A file's class is the first segment of its
 * path ({@code training_data/chat.jsonl}), so usage, limits and retention can be told apart by
 * path. Conversation history is written by the gateway, not through the file API.
 */
public enum DataClass {
  TRAINING_DATA,
  LORA_ADAPTERS,
  RESULTS,
  DATA,
  CONVERSATION_HISTORY;

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<DataClass> of(String wireName) {
    return Arrays.stream(values()).filter(c -> c.wireName().equals(wireName)).findFirst();
  }

  /** The classes a client writes through the file API. */
  public boolean writableByFiles() {
    return this != CONVERSATION_HISTORY;
  }
}
