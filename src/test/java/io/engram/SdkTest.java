package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.NodeSuite;
import io.engram.support.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Engram's SDKs, each built and run by its own test suite against this running Engram (never a
 * mock): sdk/typescript with node:test, sdk/python with unittest, sdk/java with Maven.
 */
class SdkTest {

  @Test
  void theTypeScriptSdk() throws Exception {
    Path sdk = Path.of("sdk/typescript");
    try (TestServer server = TestServer.start()) {
      if (!java.nio.file.Files.isDirectory(sdk.resolve("node_modules"))) {
        NodeSuite.npm(sdk, "ci", "--no-audit", "--no-fund");
      }
      NodeSuite.npm(sdk, "run", "build");
      NodeSuite.run(sdk, "test/sdk.test.mjs", environment(server)).assertPassed(10);
    }
  }

  @Test
  void thePythonSdk() throws Exception {
    Path sdk = Path.of("sdk/python");
    boolean present;
    try {
      present = new ProcessBuilder("python3", "--version").start().waitFor() == 0;
    } catch (java.io.IOException e) {
      present = false;
    }
    if (!present && "true".equals(System.getenv("CI"))) {
      throw new AssertionError("python3 is required in CI for the Python SDK's tests");
    }
    org.junit.jupiter.api.Assumptions.assumeTrue(present, "python3 not found: skipped");
    try (TestServer server = TestServer.start()) {
      ProcessBuilder tests = new ProcessBuilder(
              "python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
          .directory(sdk.toFile())
          .redirectErrorStream(true);
      tests.environment().putAll(environment(server));
      tests.environment().put("PYTHONPATH", sdk.toAbsolutePath().toString());
      Process process = tests.start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(5, TimeUnit.MINUTES)).isTrue();
      System.out.println(output);
      assertThat(process.exitValue()).as(output).isZero();
      assertThat(output).contains("Ran 9 tests").contains("OK");
    }
  }

  @Test
  void theJavaSdk() throws Exception {
    Path sdk = Path.of("sdk/java");
    try (TestServer server = TestServer.start()) {
      // The SDK is its own Maven project: built and tested by Maven, with the JDK this build runs.
      ProcessBuilder maven = new ProcessBuilder("mvn", "-B", "-q", "-Dstyle.color=never", "test")
          .directory(sdk.toFile())
          .redirectErrorStream(true);
      maven.environment().putAll(environment(server));
      maven.environment().put("JAVA_HOME", System.getProperty("java.home"));
      Process process = maven.start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(10, TimeUnit.MINUTES)).isTrue();
      System.out.println(output);
      assertThat(process.exitValue()).as(output).isZero();
      assertThat(sdk.resolve("target/surefire-reports/TEST-io.engram.sdk.EngramLiveTest.xml"))
          .content()
          .contains("tests=\"7\"")
          .contains("failures=\"0\"")
          .contains("errors=\"0\"");
    }
  }

  /**
   * The SDKs are versioned with the server: each package's metadata carries the server's version
   * (without -SNAPSHOT), so a release publishes them together.
   */
  @Test
  void theSdksCarryTheServersVersion() throws Exception {
    String pom = java.nio.file.Files.readString(Path.of("pom.xml"));
    java.util.regex.Matcher own = java.util.regex.Pattern.compile(
            "<artifactId>engram</artifactId>\\s*<version>([^<]+)</version>")
        .matcher(pom);
    assertThat(own.find()).as("the server's version in pom.xml").isTrue();
    String version = own.group(1).replace("-SNAPSHOT", "");
    assertThat(java.nio.file.Files.readString(sdk("typescript/package.json")))
        .contains("\"version\": \"" + version + "\"");
    assertThat(java.nio.file.Files.readString(sdk("python/pyproject.toml")))
        .contains("version = \"" + version + "\"");
    assertThat(java.nio.file.Files.readString(sdk("python/engram/__init__.py")))
        .contains("__version__ = \"" + version + "\"");
    assertThat(java.nio.file.Files.readString(sdk("java/pom.xml")))
        .containsPattern(
            "<artifactId>engram-sdk</artifactId>\\s*<version>" + version + "</version>");
  }

  private static Path sdk(String file) {
    return Path.of("sdk").resolve(file);
  }

  /** What the suites read: the server, an account key, a token, an admin key, a limited token. */
  private static Map<String, String> environment(TestServer server) {
    String org = server.createOrganization("growth");
    String limitedOrg = server.createOrganization("seed");
    Http.Response limit = server.asOperator(server
        .http
        .post("/v1/organizations/" + limitedOrg + "/env")
        .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"1\"}}"));
    if (limit.status() != 200) {
      throw new IllegalStateException(limit.text());
    }
    return Map.of(
        "ENGRAM_URL",
        "http://127.0.0.1:" + server.engram.port(),
        "ENGRAM_ADMIN",
        TestServer.ADMIN_KEY,
        "ENGRAM_TOKEN",
        server.tokenWithEveryScope(org),
        "ENGRAM_KEY",
        server.apiKey(org, 1000, "admin"),
        "ENGRAM_LIMITED",
        server.token(limitedOrg, null, "memory:read"));
  }
}
