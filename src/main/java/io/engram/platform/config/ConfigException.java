package io.engram.platform.config;

import java.util.List;

/** Start-up configuration is invalid; each problem names its variable and the allowed range. */
public final class ConfigException extends RuntimeException {
  private final List<String> problems;

  public ConfigException(List<String> problems) {
    super("Invalid configuration:\n  - " + String.join("\n  - ", problems));
    this.problems = List.copyOf(problems);
  }

  public List<String> problems() {
    return problems;
  }
}
