package io.engram.platform;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.config.SettingLayer;
import io.engram.platform.config.SettingsResolver;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SettingsResolverTest {

  private final SettingsResolver resolver = new SettingsResolver()
      .with(SettingLayer.SYSTEM_DEFAULT, Map.of("REQUEST_TIMEOUT", "120", "LOG_LEVEL", "INFO", "A", "system"))
      .with(SettingLayer.PLAN_DEFAULT, Map.of("MAX_CONCURRENT_REQUESTS", "20", "A", "plan"))
      .with(SettingLayer.ORGANIZATION, Map.of("MAX_CONCURRENT_REQUESTS", "10", "A", "org", "CUSTOM", "x"))
      .with(SettingLayer.INSTANCE, Map.of("REQUEST_TIMEOUT", "300", "A", "instance"))
      .with(SettingLayer.RUNTIME_OVERRIDE, Map.of("A", "runtime"));

  @Test
  void aLaterLayerOverridesEveryEarlierOne() {
    assertThat(resolver.resolve("A").orElseThrow())
        .isEqualTo(new SettingsResolver.Resolved("A", "runtime", SettingLayer.RUNTIME_OVERRIDE));
    assertThat(resolver.resolve("REQUEST_TIMEOUT").orElseThrow().source()).isEqualTo(SettingLayer.INSTANCE);
    assertThat(resolver.resolve("MAX_CONCURRENT_REQUESTS").orElseThrow().value()).isEqualTo("10");
    assertThat(resolver.resolve("LOG_LEVEL").orElseThrow().source()).isEqualTo(SettingLayer.SYSTEM_DEFAULT);
  }

  @Test
  void eachLayerWinsWhenItIsTheHighestThatDefinesTheName() {
    for (SettingLayer layer : SettingLayer.values()) {
      SettingsResolver upTo = new SettingsResolver();
      for (SettingLayer lower : SettingLayer.values()) {
        if (lower.compareTo(layer) <= 0) {
          upTo = upTo.with(lower, Map.of("X", lower.name()));
        }
      }
      assertThat(upTo.resolve("X").orElseThrow().value()).isEqualTo(layer.name());
    }
  }

  @Test
  void emptyValuesDoNotOverrideAndUnknownNamesResolveToNothing() {
    SettingsResolver withBlank = resolver.with(SettingLayer.RUNTIME_OVERRIDE, Map.of("A", ""));
    assertThat(withBlank.resolve("A").orElseThrow().source()).isEqualTo(SettingLayer.INSTANCE);
    assertThat(resolver.resolve("NOPE")).isEmpty();
  }

  @Test
  void resolveAllListsCustomVariablesWithTheirSource() {
    assertThat(resolver.resolveAll()).containsKeys("A", "CUSTOM", "LOG_LEVEL", "MAX_CONCURRENT_REQUESTS");
    assertThat(resolver.resolveAll().get("CUSTOM").source()).isEqualTo(SettingLayer.ORGANIZATION);
  }
}
