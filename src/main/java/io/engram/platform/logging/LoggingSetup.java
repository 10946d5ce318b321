package io.engram.platform.logging;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.net.SyslogAppender;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.encoder.Encoder;
import io.engram.platform.config.EngramConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import net.logstash.logback.encoder.LogstashEncoder;
import org.slf4j.LoggerFactory;

/**
 * Configures Logback from LOG_LEVEL, LOG_FORMAT and LOG_DESTINATION before anything logs.
 * {@code json} writes one JSON object a line (with the MDC's request_id); {@code text} is for
 * people; {@code structured} is logfmt (key=value) for line-oriented collectors.
 */
public final class LoggingSetup {

  private LoggingSetup() {}

  public static void apply(EngramConfig config) {
    apply(config, false);
  }

  /** For command-line tools: logs go to stderr so stdout stays the command's own output. */
  public static void applyForCommandLine(EngramConfig config) {
    apply(config, true);
  }

  private static void apply(EngramConfig config, boolean toStderr) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    Appender<ILoggingEvent> appender = toStderr
        ? appender(context, config, true)
        : asynchronous(context, appender(context, config, false));
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(level(config.logging().level()));
    root.addAppender(appender);
    // Jetty, Hikari and Flyway are chatty at INFO; their warnings still come through.
    for (String noisy :
        new String[] {"org.eclipse.jetty", "com.zaxxer.hikari", "org.flywaydb", "io.javalin"}) {
      context
          .getLogger(noisy)
          .setLevel(root.getLevel().isGreaterOrEqual(Level.WARN) ? root.getLevel() : Level.WARN);
    }
    // The tokenizer library probes for a GPU on every start and warns that there is none: expected
    // on a CPU server.
    context.getLogger("ai.djl.util.cuda").setLevel(Level.ERROR);
    // The in-process engine's library warns on its first generation that its native build is not
    // on the class path: the Java vector operations it uses instead are the ones chosen here.
    context.getLogger("com.github.tjake.jlama.tensor.operations").setLevel(Level.ERROR);
    // Azure's JDK HTTP adapter warns on every upload that the JDK sets Content-Length itself
    // (which it does, correctly): one line per request that tells an operator nothing.
    context.getLogger("com.azure.core.http.jdk.httpclient.JdkHttpClient").setLevel(Level.ERROR);
    OrganizationLogLevels.install();
  }

  private static Appender<ILoggingEvent> appender(
      LoggerContext context, EngramConfig config, boolean toStderr) {
    Appender<ILoggingEvent> appender = switch (config.logging().destination()) {
      case "file" -> {
        try {
          if (config.logging().filePath().toAbsolutePath().getParent() != null) {
            Files.createDirectories(config.logging().filePath().toAbsolutePath().getParent());
          }
        } catch (IOException e) {
          throw new UncheckedIOException(
              "LOG_FILE_PATH: cannot create the directory of "
                  + config.logging().filePath(),
              e);
        }
        FileAppender<ILoggingEvent> file = new FileAppender<>();
        file.setFile(config.logging().filePath().toString());
        file.setEncoder(encoder(context, config.logging().format()));
        yield file;
      }
      case "syslog" -> {
        SyslogAppender syslog = new SyslogAppender();
        syslog.setSyslogHost("localhost");
        syslog.setFacility("USER");
        syslog.setSuffixPattern("engram " + pattern(config.logging().format()));
        yield syslog;
      }
      default -> {
        ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
        console.setEncoder(encoder(context, config.logging().format()));
        if (toStderr) {
          console.setTarget("System.err");
        }
        yield console;
      }
    };
    appender.setContext(context);
    appender.setName(config.logging().destination());
    appender.start();
    return appender;
  }

  /**
   * Request threads hand log events to a queue and a background thread writes them, so a slow
   * console or disk does not show up in request latency. The queue blocks when full rather than
   * dropping lines: an access log with holes is worse than a slower request.
   */
  private static Appender<ILoggingEvent> asynchronous(
      LoggerContext context, Appender<ILoggingEvent> target) {
    AsyncAppender async = new AsyncAppender();
    async.setContext(context);
    async.setName("async-" + target.getName());
    async.setQueueSize(8192);
    async.setDiscardingThreshold(0);
    async.setIncludeCallerData(false);
    async.addAppender(target);
    async.start();
    return async;
  }

  /** Flushes queued lines and closes the appenders; call last on shutdown. */
  public static void flush() {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).stop();
  }

  private static Encoder<ILoggingEvent> encoder(LoggerContext context, String format) {
    if (format.equals("json")) {
      LogstashEncoder json = new LogstashEncoder();
      json.setContext(context);
      json.setIncludeContext(false);
      json.addExcludeMdcKeyName(OrganizationLogLevels.ORGANIZATION);
      json.start();
      return json;
    }
    PatternLayoutEncoder text = new PatternLayoutEncoder();
    text.setContext(context);
    text.setPattern(pattern(format) + "%n");
    text.start();
    return text;
  }

  private static String pattern(String format) {
    return format.equals("structured")
        ? "ts=%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} level=%level logger=%logger{36} request_id=%X{request_id} msg=\"%replace(%msg){'\"','\\\\\"'}\"%replace( error=\"%ex{short}\"){' error=\"\"',''}"
        : "%d{HH:mm:ss.SSS} %-5level %logger{36} [%X{request_id}] %msg%ex";
  }

  static Level level(String logLevel) {
    return switch (logLevel) {
      case "debug" -> Level.DEBUG;
      case "warning" -> Level.WARN;
      case "error", "critical" -> Level.ERROR;
      default -> Level.INFO;
    };
  }
}
