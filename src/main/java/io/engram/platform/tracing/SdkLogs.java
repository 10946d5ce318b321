package io.engram.platform.tracing;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * The OpenTelemetry SDK's own log lines (java.util.logging: a collector that refuses the key, one
 * that is unreachable) into the server's log, as its warnings, instead of plain text on stderr
 * beside the JSON lines. Its debug chatter stays out.
 */
final class SdkLogs extends Handler {
  /** Held: java.util.logging keeps its loggers only weakly, and the settings would go with them. */
  private static Logger sdk;

  private SdkLogs() {}

  static synchronized void install() {
    if (sdk == null) {
      sdk = Logger.getLogger("io.opentelemetry");
      sdk.setUseParentHandlers(false);
      sdk.setLevel(Level.WARNING);
      sdk.addHandler(new SdkLogs());
    }
  }

  @Override
  public void publish(LogRecord record) {
    if (record.getLevel().intValue() < Level.WARNING.intValue()) {
      return;
    }
    String message = new java.util.logging.SimpleFormatter().formatMessage(record);
    Throwable thrown = record.getThrown();
    LoggerFactory.getLogger(record.getLoggerName())
        .warn("{}{}", message, thrown == null ? "" : " (" + thrown + ")");
  }

  @Override
  public void flush() {}

  @Override
  public void close() {}
}
