package io.engram.bench;

import io.engram.guardrails.detect.PiiDetector;
import io.engram.guardrails.detect.SecretsDetector;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the built-in personal-data and secrets checks cost a 4 KB prompt (issue 66's bound: 0.3 ms
 * at the median for input and output together): everyday text with nothing to find, and the same
 * with an e-mail address, a card number and a key in it. Run by bench/jmh.sh GuardrailDetectors.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class GuardrailDetectorsBenchmark {
  /** Everyday chat, with numbers of every shape that is not personal data. */
  public static final List<String> SENTENCES = List.of(
      "Could you summarise the meeting notes from Tuesday and list the open action items?",
      "We shipped 1,204 units in Q3, up 12% on last year, and the margin held at 31.5%.",
      "The deployment on version 4.2.1 failed at 10:42 because the migration timed out.",
      "Please draft a friendly reply to the customer explaining the delay of 3-5 days.",
      "My flight LH1234 leaves gate B22 at 7:15, can you remind me an hour before?",
      "Translate the following paragraph into Spanish, keeping the product names as they are.");

  @Param({"clean", "with-findings"})
  public String text;

  private String prompt;
  private final PiiDetector pii = new PiiDetector(Set.of());
  private final SecretsDetector secrets = new SecretsDetector();

  /** {@code length} characters of {@link #SENTENCES} in random order. */
  public static String everyday(Random random, int length) {
    StringBuilder built = new StringBuilder();
    while (built.length() < length) {
      built.append(SENTENCES.get(random.nextInt(SENTENCES.size()))).append(' ');
    }
    return built.substring(0, length);
  }

  @Setup
  public void setUp() {
    Random random = new Random(7);
    String built = everyday(random, 4096);
    if (text.equals("with-findings")) {
      built = built.substring(0, 1050)
          + "Mail jane.doe@example.com, card 4111 1111 1111 1111, key "
          + "sk-proj-a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ012345. " + built.substring(1050);
    }
    prompt = built.substring(0, 4096);
  }

  @Benchmark
  public void personalDataAndSecrets(Blackhole sink) {
    sink.consume(pii.find(prompt));
    sink.consume(secrets.find(prompt));
  }
}
