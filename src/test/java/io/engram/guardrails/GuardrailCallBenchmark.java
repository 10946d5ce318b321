package io.engram.guardrails;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.bench.GuardrailDetectorsBenchmark;
import io.engram.platform.json.Json;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What issue 66's bound is about: a call's input and output guardrails with the built-in personal
 * data and secrets checks, on a 4 KB prompt and a 1 KB answer (whole, and streamed in pieces of
 * four characters, as a model's tokens come). Run by bench/jmh.sh GuardrailCall.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class GuardrailCallBenchmark {
  private List<Guardrail> input;
  private List<Guardrail> output;
  private String prompt;
  private String answer;
  private List<String> pieces;

  private static Guardrail guardrail(String id, String phase, String type) {
    return Guardrail.of(
        id,
        "org_bench",
        GuardrailSpec.parse(Json.read(
            "{\"name\":\"" + id + "\",\"applies_to\":[\"" + phase + "\"],\"check\":{\"type\":\""
                + type + "\"},\"action\":\"redact\"}",
            ObjectNode.class)),
        0,
        0);
  }

  @Setup
  public void setUp() {
    input = List.of(
        guardrail("grd_in_pii", "input", "pii"), guardrail("grd_in_keys", "input", "secrets"));
    output = List.of(
        guardrail("grd_out_pii", "output", "pii"), guardrail("grd_out_keys", "output", "secrets"));
    Random random = new Random(7);
    prompt = GuardrailDetectorsBenchmark.everyday(random, 4096);
    answer = GuardrailDetectorsBenchmark.everyday(random, 1024);
    pieces = new java.util.ArrayList<>();
    for (int at = 0; at < answer.length(); at += 4) {
      pieces.add(answer.substring(at, Math.min(answer.length(), at + 4)));
    }
  }

  /** The input screened, and the answer screened whole: a call that does not stream. */
  @Benchmark
  public void inputAndWholeAnswer(Blackhole sink) {
    Placeholders placeholders = new Placeholders();
    sink.consume(
        Screening.of(Phase.INPUT, input, List.of(new Screening.Text(prompt, true)), placeholders));
    AnswerScreen screen = new AnswerScreen(output, placeholders, firing -> {});
    sink.consume(screen.take(answer));
    sink.consume(screen.finish());
  }

  /** The input screened, and the answer screened as it streams. */
  @Benchmark
  public void inputAndStreamedAnswer(Blackhole sink) {
    Placeholders placeholders = new Placeholders();
    sink.consume(
        Screening.of(Phase.INPUT, input, List.of(new Screening.Text(prompt, true)), placeholders));
    AnswerScreen screen = new AnswerScreen(output, placeholders, firing -> {});
    for (String piece : pieces) {
      sink.consume(screen.take(piece));
    }
    sink.consume(screen.finish());
  }
}
