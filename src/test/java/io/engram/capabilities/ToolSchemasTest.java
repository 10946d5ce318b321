package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every capability of the registry but the conversation itself has a tool, and docs/capabilities.md
 * says of each how it acts: a capability added to the file without either would never be offered,
 * or be offered undocumented.
 */
class ToolSchemasTest {
  private static final CapabilityRegistry REGISTRY = CapabilityRegistry.load(List.of());

  @Test
  void everyCapabilityButAnsweringHasATool() {
    for (Capability capability : REGISTRY.all()) {
      assertThat(ToolSchemas.parameters(capability.id(), Json.MAPPER.createObjectNode()))
          .as(capability.id())
          .matches(schema -> schema.isPresent() != capability.id().equals("answer_questions"));
    }
  }

  @Test
  void theDocsSayHowEachCapabilityActs() throws Exception {
    String docs = Files.readString(Path.of("docs/capabilities.md"));
    for (Capability capability : REGISTRY.all()) {
      assertThat(docs).as(capability.id()).contains("| `" + capability.id() + "` |");
    }
  }

  @Test
  void theConfigIsTheSchemasLimit() {
    var config = Json.MAPPER.createObjectNode().put("maxRefundAmount", 250.0);
    var schema = ToolSchemas.parameters("process_refunds", config).orElseThrow();
    assertThat(ArgumentCheck.violation(
            schema,
            Json.read(
                "{\"order_id\":\"o1\",\"amount\":300}",
                com.fasterxml.jackson.databind.JsonNode.class)))
        .hasValueSatisfying(reason -> assertThat(reason).contains("arguments.amount"));
    assertThat(ArgumentCheck.violation(
            schema,
            Json.read(
                "{\"order_id\":\"o1\",\"amount\":200}",
                com.fasterxml.jackson.databind.JsonNode.class)))
        .isEmpty();
    assertThat(ArgumentCheck.violation(
            schema,
            Json.read(
                "{\"order_id\":\"o1\",\"amount\":20,\"extra\":1}",
                com.fasterxml.jackson.databind.JsonNode.class)))
        .hasValueSatisfying(reason -> assertThat(reason).contains("not an argument"));
  }
}
