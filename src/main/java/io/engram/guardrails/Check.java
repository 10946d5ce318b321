package io.engram.guardrails;

import io.engram.guardrails.detect.Detector;
import io.engram.guardrails.detect.InjectionDetector;
import io.engram.guardrails.detect.PiiDetector;
import io.engram.guardrails.detect.RegexDetector;
import io.engram.guardrails.detect.SecretsDetector;
import io.engram.guardrails.detect.TermsDetector;
import java.util.List;
import java.util.Set;

/** What a guardrail looks for in text: each kind a detector of places it fires. */
public sealed interface Check {
  /** The type's name in the API ({@code check.type}). */
  String type();

  /** The detector that finds where the check fires. */
  Detector detector();

  /** Personal data of {@code entities} (every entity when empty). */
  record Pii(List<String> entities) implements Check {
    public Pii {
      entities = List.copyOf(entities);
    }

    @Override
    public String type() {
      return "pii";
    }

    @Override
    public Detector detector() {
      return new PiiDetector(Set.copyOf(entities));
    }
  }

  /** Credentials by their published formats. */
  record Secrets() implements Check {
    @Override
    public String type() {
      return "secrets";
    }

    @Override
    public Detector detector() {
      return new SecretsDetector();
    }
  }

  /** The organization's words and phrases, whole and in any case. */
  record Terms(List<String> terms) implements Check {
    public Terms {
      terms = List.copyOf(terms);
    }

    @Override
    public String type() {
      return "terms";
    }

    @Override
    public Detector detector() {
      return new TermsDetector(terms);
    }
  }

  /** The organization's patterns, run on RE2. */
  record Regex(List<String> patterns) implements Check {
    public Regex {
      patterns = List.copyOf(patterns);
    }

    @Override
    public String type() {
      return "regex";
    }

    @Override
    public Detector detector() {
      return RegexDetector.compile(patterns);
    }
  }

  /** Text addressed to the model over its owner's head. */
  record PromptInjection() implements Check {
    @Override
    public String type() {
      return "prompt_injection";
    }

    @Override
    public Detector detector() {
      return new InjectionDetector();
    }
  }

  /** An organization's JSON Schema (2020-12) the text must be a valid document of. */
  record JsonSchema(com.fasterxml.jackson.databind.node.ObjectNode schema) implements Check {
    @Override
    public String type() {
      return "json_schema";
    }

    @Override
    public Detector detector() {
      return io.engram.guardrails.detect.JsonSchemaDetector.compile(schema);
    }
  }

  /**
   * The organization's own check over HTTP ({@link Webhooks}): {@code timeoutMs} to answer, and
   * whether a webhook that cannot answer blocks ({@code on_error: block}) or lets the text pass.
   */
  record Webhook(java.net.URI url, int timeoutMs, boolean blockOnError) implements Check {
    @Override
    public String type() {
      return "webhook";
    }

    /** A webhook needs the server's client and firewall: built by {@link Webhooks}. */
    @Override
    public Detector detector() {
      throw new IllegalStateException("a webhook's detector is built by Webhooks");
    }
  }
}
