package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.engram.platform.config.EnvironmentVariables;
import io.engram.support.Http;
import io.engram.support.TestDatabases;
import io.engram.support.TestServer;
import io.engram.support.ToolProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What deploy/ gives an operator agrees with the server it deploys: the alert rules are valid
 * Prometheus rules about metrics the server exports, the Kubernetes manifests probe the health
 * routes and set only variables the server reads, and every stop waits longer than the server's
 * own grace. (HAProxy's configuration runs in the three-node test.)
 */
class DeploymentFilesTest {
  private static final Path DEPLOY = Path.of("deploy");

  @Test
  void theAlertRulesAreValidAndAboutMetricsTheServerExports() throws Exception {
    String promtool = ToolProcess.find("ENGRAM_PROMTOOL", "promtool");
    Path rules = DEPLOY.resolve("prometheus/engram-alerts.yml");
    Process check = new ProcessBuilder(promtool, "check", "rules", rules.toString())
        .redirectErrorStream(true)
        .start();
    String said = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(check.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(check.exitValue()).as(said).isZero();

    List<String> metrics = new ArrayList<>();
    Matcher names = Pattern.compile("\\b(engram_[a-z_]+)").matcher(Files.readString(rules));
    while (names.find()) {
      metrics.add(names.group(1));
    }
    assertThat(metrics).isNotEmpty();
    try (TestServer server =
        TestServer.builder().env("REDIS_URL", TestDatabases.redisUrl()).start()) {
      Http.Response scraped = server.asOperator(server.http.get("/metrics"));
      for (String metric : metrics) {
        assertThat(scraped.text()).as(metric).contains("\n" + metric);
      }
    }
  }

  @Test
  void theKubernetesManifestsProbeTheHealthRoutesAndWaitOutTheGrace() throws Exception {
    List<JsonNode> documents = new ArrayList<>();
    try (MappingIterator<JsonNode> read = new ObjectMapper(new YAMLFactory())
        .readerFor(JsonNode.class)
        .readValues(DEPLOY.resolve("kubernetes/engram.yaml").toFile())) {
      read.forEachRemaining(documents::add);
    }
    JsonNode config = kind(documents, "ConfigMap").get("data");
    JsonNode pod = kind(documents, "StatefulSet").at("/spec/template/spec");
    JsonNode container = pod.at("/containers/0");
    assertThat(container.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/v1/health");
    assertThat(container.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/v1/health/ready");
    List<String> variables = new ArrayList<>();
    config.fieldNames().forEachRemaining(variables::add);
    container.get("env").forEach(entry -> variables.add(entry.get("name").asText()));
    assertThat(variables)
        .allSatisfy(name -> assertThat(EnvironmentVariables.spec(name)).as(name).isPresent());
    long grace = config.get("ENGRAM_SHUTDOWN_GRACE_SECONDS").asLong();
    long preStop = container.at("/lifecycle/preStop/sleep/seconds").asLong();
    assertThat(pod.get("terminationGracePeriodSeconds").asLong()).isGreaterThan(grace + preStop);
    assertThat(kind(documents, "Service").at("/spec/selector/app").asText()).isEqualTo("engram");
  }

  @Test
  void theSolrExamplesSetOnlyVariablesTheServerReadsAndParse() throws Exception {
    List<JsonNode> documents = new ArrayList<>();
    try (MappingIterator<JsonNode> read = new ObjectMapper(new YAMLFactory())
        .readerFor(JsonNode.class)
        .readValues(DEPLOY.resolve("kubernetes/engram-solr.yaml").toFile())) {
      read.forEachRemaining(documents::add);
    }
    JsonNode config = kind(documents, "ConfigMap").get("data");
    List<String> variables = new ArrayList<>();
    config.fieldNames().forEachRemaining(variables::add);
    for (String line : Files.readAllLines(DEPLOY.resolve("systemd/solr.env"))) {
      String stripped = line.replaceFirst("^#", "");
      if (stripped.matches("[A-Z_]+=.*")) {
        variables.add(stripped.substring(0, stripped.indexOf('=')));
      }
    }
    assertThat(variables)
        .contains("ENGRAM_MEMORY_INDEX", "ENGRAM_SOLR_URL", "ENGRAM_SOLR_PASSWORD");
    assertThat(variables)
        .allSatisfy(name -> assertThat(EnvironmentVariables.spec(name)).as(name).isPresent());
    // The settings parse as the server reads them.
    java.util.Map<String, String> env = new java.util.HashMap<>();
    config
        .fields()
        .forEachRemaining(field -> env.put(field.getKey(), field.getValue().asText()));
    env.put("ENGRAM_DATA_DIR", Files.createTempDirectory("engram-deploy").toString());
    io.engram.platform.config.MemoryIndexSettings settings =
        io.engram.platform.config.EngramConfig.fromEnvironment(env).memoryIndex();
    assertThat(settings.solr()).isTrue();
    assertThat(settings.solrNodes()).hasSize(3);
    assertThat(kind(documents, "StatefulSet").at("/metadata/name").asText()).isEqualTo("zookeeper");
  }

  @Test
  void theSystemdUnitRunsTheJarAsTheLauncherDoesAndWaitsOutTheGrace() throws Exception {
    String unit = Files.readString(DEPLOY.resolve("systemd/engram.service"));
    String launcher = Files.readString(Path.of("engram"));
    Matcher flags = Pattern.compile("JVM_FLAGS=\\((.*)\\)").matcher(launcher);
    assertThat(flags.find()).isTrue();
    assertThat(unit.replace("\\\n", " ")).contains(flags.group(1));
    Matcher stop = Pattern.compile("TimeoutStopSec=(\\d+)").matcher(unit);
    assertThat(stop.find()).isTrue();
    long defaultGrace = Long.parseLong(
        EnvironmentVariables.spec("ENGRAM_SHUTDOWN_GRACE_SECONDS").orElseThrow().defaultValue());
    assertThat(Long.parseLong(stop.group(1))).isGreaterThan(defaultGrace);
  }

  private static JsonNode kind(List<JsonNode> documents, String kind) {
    return documents.stream()
        .filter(document -> document.path("kind").asText().equals(kind))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " in the manifests"));
  }
}
