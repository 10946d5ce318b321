package io.engram;

import io.engram.inference.local.TinyModel;
import io.engram.platform.config.ConfigException;
import io.engram.platform.config.ConfigSummary;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.logging.LoggingSetup;
import io.engram.platform.net.AddressBook;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Entry point: {@code serve} runs the service; {@code admin ...} manages organizations and keys. */
public final class Main {

  private Main() {}

  public static void main(String[] args) {
    // Before any name is resolved: the outbound firewall's checked answers must be the only cache.
    AddressBook.install();
    String command = args.length == 0 ? "serve" : args[0];
    EngramConfig config;
    try {
      config = EngramConfig.fromEnvironment(System.getenv());
    } catch (ConfigException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    switch (command) {
      case "serve" -> serve(config);
      case "admin" -> {
        LoggingSetup.applyForCommandLine(
            config.withOverrides(java.util.Map.of("LOG_LEVEL", "warning")));
        System.exit(new AdminCommand(config, System.out, System.err, System.in)
            .run(Arrays.copyOfRange(args, 1, args.length)));
      }
      case "demo-model" -> {
        // An untrained model in the real formats, so the local engine can be tried with no
        // download.
        Path dir = TinyModel.write(config.inference().modelCacheDir(), 42);
        System.out.println(
            "Wrote the tiny untrained model '" + TinyModel.ID + "' to " + dir.toAbsolutePath()
                + "\nIts weights are random: it exercises the local engine, its output is noise."
                + "\nServe it with: DEFAULT_MODEL=" + TinyModel.ID + " ./engram serve");
      }
      case "help", "--help", "-h" -> System.out.println(AdminCommand.USAGE);
      default -> {
        System.err.println("Unknown command '" + command + "'.\n" + AdminCommand.USAGE);
        System.exit(2);
      }
    }
  }

  private static void serve(EngramConfig config) {
    Optional<String> taken = ServerClaim.claim(
        config.storage().dataDir(), config.server().host(), config.server().port());
    if (taken.isPresent()) {
      // One sentence for the person at the console, before any log line.
      System.err.println(taken.get());
      System.exit(1);
      return;
    }
    LoggingSetup.apply(config);
    Logger log = LoggerFactory.getLogger(Main.class);
    log.info(
        "starting Engram {} on Java {}",
        Objects.requireNonNullElse(
            Main.class.getPackage().getImplementationVersion(), "(development build)"),
        Runtime.version());
    ConfigSummary.of(config)
        .forEach((group, entries) ->
            log.info("configuration, {}: {}", group, String.join(", ", entries)));
    Engram engram;
    try {
      engram = Engram.start(config, Clock.systemUTC(), key -> {
        // Printed once, to the console only: the key is stored hashed and never logged.
        System.err.printf(
            "%n  No account key existed, so one was created. It is shown only now:%n%n    %s%n%n"
                + "  Use it as 'Authorization: Bearer <key>' on /v1/organizations, or set ENGRAM_ADMIN_KEY.%n%n",
            key);
        log.warn("created the first account key; it was printed once on the console");
      });
    } catch (RuntimeException e) {
      log.error("start-up failed: {}", e.getMessage(), e);
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("shutdown").unstarted(() -> {
      engram.close();
      LoggingSetup.flush();
    }));
    log.info(
        "Engram listening on http://{}:{} (database: {}, data dir: {})",
        config.server().host(),
        engram.port(),
        engram.services().database().kind().name().toLowerCase(java.util.Locale.ROOT),
        config.storage().dataDir().toAbsolutePath().normalize());
    // For the person at the console: the JSON log above is for machines, this line is for them.
    String host = config.server().host();
    System.err.printf(
        "%n  Engram is ready: http://%s:%d (API reference: /openapi.json, health: /v1/health)%n%n",
        host.equals("0.0.0.0") || host.equals("::") ? "localhost" : host, engram.port());
  }
}
