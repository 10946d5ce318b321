package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.LauncherProbe;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The launcher a newcomer runs first ({@code ./engram}), as written: its help names every
 * command, the JVM's incubator warning stays off the console while the program's own stderr
 * passes, and {@code serve} logs text at a terminal and JSON into a pipe. It runs against a copy
 * of the launcher whose target/engram.jar is a probe (up to date, so nothing is built).
 */
class LauncherTest {
  static Path root;

  @BeforeAll
  static void copyTheLauncher() throws IOException {
    root = Files.createTempDirectory("engram-launcher");
    Files.copy(Path.of("engram"), root.resolve("engram"));
    root.resolve("engram").toFile().setExecutable(true);
    Files.writeString(root.resolve("pom.xml"), "<project/>");
    Files.createDirectories(root.resolve("src/main"));
    Path jar = Files.createDirectories(root.resolve("target")).resolve("engram.jar");
    Manifest manifest = new Manifest();
    Attributes main = manifest.getMainAttributes();
    main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.put(Attributes.Name.MAIN_CLASS, LauncherProbe.class.getName());
    Path classes = Path.of(
        LauncherProbe.class.getProtectionDomain().getCodeSource().getLocation().getPath());
    main.put(Attributes.Name.CLASS_PATH, classes.toUri().toString());
    try (OutputStream out = Files.newOutputStream(jar);
        JarOutputStream ignored = new JarOutputStream(out, manifest)) {
      // the manifest is the whole jar: the probe's class comes from its Class-Path
    }
    Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(60)));
  }

  private record Run(int exit, String out, String err) {}

  private static Run run(List<String> command) throws Exception {
    Path out = Files.createTempFile("launcher", ".out");
    Path err = Files.createTempFile("launcher", ".err");
    ProcessBuilder builder = new ProcessBuilder(command)
        .directory(root.toFile())
        .redirectOutput(out.toFile())
        .redirectError(err.toFile());
    builder.environment().remove("LOG_FORMAT");
    builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
    Process process = builder.start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the launcher ends").isTrue();
    return new Run(
        process.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  @Test
  void helpNamesEveryCommandIncludingTestAndBuild() throws Exception {
    Run help = run(List.of("./engram", "help"));
    assertThat(help.exit()).as(help.err()).isZero();
    assertThat(help.out())
        .contains("serve", "test ", "build ", "whole test suite", "probe args=help")
        .doesNotContain("WARNING: Using incubator modules");
    assertThat(help.err()).doesNotContain("building target/engram.jar");
  }

  @Test
  void theIncubatorWarningIsFilteredAndTheProgramsOwnStderrPasses() throws Exception {
    Run serve = run(List.of("./engram", "serve", "--probe"));
    assertThat(serve.exit()).as(serve.err()).isZero();
    assertThat(serve.out()).contains("probe args=serve --probe", "probe vector=true");
    assertThat(serve.err())
        .contains("probe: a line of its own on stderr")
        .doesNotContain("incubator");
  }

  @Test
  void serveLogsTextAtATerminalAndJsonIntoAPipe() throws Exception {
    Run piped = run(List.of("./engram", "serve"));
    assertThat(piped.out()).contains("probe LOG_FORMAT=\n");
    // util-linux script gives the launcher a terminal as its standard output
    Run terminal = run(List.of("script", "-qec", "./engram serve", "/dev/null"));
    assertThat(terminal.exit()).as(terminal.err()).isZero();
    assertThat(terminal.out()).contains("probe LOG_FORMAT=text");
    Run chosen = run(List.of("script", "-qec", "LOG_FORMAT=json ./engram serve", "/dev/null"));
    assertThat(chosen.out()).contains("probe LOG_FORMAT=json");
  }
}
