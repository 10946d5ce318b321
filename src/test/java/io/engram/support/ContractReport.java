package io.engram.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * What happens to a contract violation: the test fails with it, or (with
 * {@code -Dengram.contract.report=FILE}, to survey a whole run at once) it is appended to a file.
 */
final class ContractReport {
  private static final String REPORT = System.getProperty("engram.contract.report");

  private ContractReport() {}

  static synchronized void failed(List<String> violations) {
    if (REPORT == null) {
      throw new AssertionError(
          "The exchange breaks openapi.yaml:\n  " + String.join("\n  ", violations));
    }
    try {
      Files.write(
          Path.of(REPORT), violations, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
