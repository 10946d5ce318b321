package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The registry file is checked when the service starts: a bad edit stops start-up with a clear message. */
class CapabilityRegistryFileTest {

  private static final String VALID_ENTRY = """
        - id: answer_questions
          name: Answer Questions
          description: Answers.
          category: org_intelligence
          scope: both
          tierRequirement: free
          alwaysEnabled: true
      """;

  private static CapabilityRegistry parse(String yaml, List<CapabilityHandler> handlers)
      throws Exception {
    return CapabilityRegistry.parse(
        new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), handlers);
  }

  private static String withEntry(String extra) {
    return "capabilities:\n" + VALID_ENTRY + extra;
  }

  /** A handler that returns its arguments. */
  record Echo(String capabilityId) implements CapabilityHandler {
    @Override
    public com.fasterxml.jackson.databind.JsonNode execute(Invocation invocation) {
      return invocation.arguments();
    }
  }

  @Test
  void theBundledRegistryLoads() {
    CapabilityRegistry registry = CapabilityRegistry.load(List.of());
    assertThat(registry.size()).isBetween(15, 22);
    assertThat(registry.alwaysEnabled())
        .extracting(Capability::id)
        .containsExactly("answer_questions");
    assertThat(registry.all()).noneMatch(Capability::executable);
  }

  @Test
  void executableFollowsTheRegisteredHandlers() throws Exception {
    CapabilityRegistry registry = parse(withEntry(""), List.of(new Echo("answer_questions")));
    assertThat(registry.find("answer_questions").orElseThrow().executable()).isTrue();
    assertThat(registry.handler("answer_questions")).isPresent();
    assertThatThrownBy(() -> parse(withEntry(""), List.of(new Echo("fly"))))
        .hasMessageContaining("a handler is registered for 'fly'");
    assertThatThrownBy(() -> parse(
            withEntry(""), List.of(new Echo("answer_questions"), new Echo("answer_questions"))))
        .hasMessageContaining("two handlers are registered for 'answer_questions'");
  }

  @Test
  void aHandlerRefusesAnEntryItCannotHonourAtStartUp() throws Exception {
    String analytics = """
          - id: access_org_analytics
            name: Analytics
            category: org_intelligence
            scope: organization
            tierRequirement: seed
            description: Figures.
            config:
              allowedMetrics: {type: string_array, required: true, enum: [members, revenue]}
              dataRetention: {type: integer, required: true, minimum: 1}
        """;
    assertThatThrownBy(() -> parse(withEntry(analytics), List.of(new OrganizationAnalytics(null))))
        .hasMessageStartingWith(
            "capabilities/registry.yaml: capability 'access_org_analytics': allowedMetrics");
    String honourable = analytics.replace("revenue", "api_keys");
    assertThat(parse(withEntry(honourable), List.of(new OrganizationAnalytics(null)))
            .find("access_org_analytics")
            .orElseThrow()
            .executable())
        .isTrue();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "category: marketing|unknown category 'marketing'",
        "scope: everyone|unknown scope 'everyone'",
        "tierRequirement: platinum|unknown tierRequirement 'platinum'",
        "colour: blue|unknown key 'colour'",
        "config: {limit: {type: integer, required: true, minimum: 5, maximum: 1}}|a lower bound is above its upper bound",
        "config: {limit: {type: decimal, required: true}}|unknown type 'decimal'",
        "config: {limit: {type: integer}}|required must be true or false",
        "config: {limit: {type: boolean, required: true, maxLength: 3}}|apply to string and string_array fields only",
        "config: {limit: {type: string, required: true, minimum: 3}}|apply to integer and number fields only"
      })
  void malformedEntriesAreRefusedWithTheirReason(String line, String reason) {
    // The line replaces the entry's line with the same key, or is added when no line has its key.
    String key = line.substring(0, line.indexOf(':'));
    String template = """
          - id: extra_capability
            category: commerce
            scope: both
            tierRequirement: free
            name: Extra
            description: Extra.
        """;
    String entry = template.contains("    " + key + ":")
        ? template.replaceFirst("    " + key + ": .*", "    " + line)
        : template + "    " + line + "\n";
    assertThatThrownBy(() -> parse(withEntry(entry), List.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("capabilities/registry.yaml: ")
        .hasMessageContaining(reason);
  }

  @Test
  void duplicateIdsAndAMissingAlwaysEnabledCapabilityAreRefused() {
    assertThatThrownBy(() -> parse(withEntry(VALID_ENTRY), List.of()))
        .hasMessageContaining("listed twice");
    assertThatThrownBy(() -> parse(
            "capabilities:\n" + VALID_ENTRY.replace("alwaysEnabled: true", "alwaysEnabled: false"),
            List.of()))
        .hasMessageContaining("no capability is alwaysEnabled");
    assertThatThrownBy(() -> parse("capabilities: []", List.of()))
        .hasMessageContaining("non-empty");
  }
}
