package io.engram.memory;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.VisibleText;
import io.engram.platform.http.JsonBody;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Turns a developer event into memory candidates, deterministically (same event, same result):
 *
 * <ol>
 *   <li>{@code metadata.memorable: false} stages nothing.</li>
 *   <li>The text is split into statements at sentence ends ({@code . ! ?} followed by a space) and
 *       line breaks.</li>
 *   <li>A statement is skipped when it has fewer than {@value #MIN_WORDS} words ({@code too_short}),
 *       is a question ({@code question}), repeats an earlier statement of the event
 *       ({@code duplicate}), or matches a candidate or durable memory already in the boundary
 *       ({@code already_known}); past {@value #MAX_CANDIDATES} candidates the rest are skipped
 *       ({@code limit}).</li>
 *   <li>Each remaining statement becomes a candidate about the event's subject, of kind
 *       {@code metadata.memoryKind} (default {@code event}) and confidence
 *       {@code metadata.confidence} (default {@value #DEFAULT_CONFIDENCE}).</li>
 * </ol>
 */
public final class EventPipeline {
  static final int MIN_WORDS = 3;
  static final int MAX_CANDIDATES = 10;
  static final double DEFAULT_CONFIDENCE = 0.6;
  private static final Pattern STATEMENT_END = Pattern.compile("(?<=[.!?])\\s+|\\R+");
  private static final Pattern WORD = Pattern.compile("\\S+");

  /** What the pipeline decided for one statement. */
  public record Statement(String text, String skipReason) {
    boolean staged() {
      return skipReason == null;
    }
  }

  /** The staging plan for an event: its statements in order, and the kind and confidence of its candidates. */
  public record Plan(List<Statement> statements, MemoryKind kind, double confidence) {
    public List<String> staged() {
      return statements.stream().filter(Statement::staged).map(Statement::text).toList();
    }
  }

  private EventPipeline() {}

  /** Reads the event fields the pipeline interprets from metadata; a wrong type is the caller's 400. */
  static Plan plan(String text, ObjectNode metadata, Predicate<String> alreadyKnown) {
    MemoryKind kind = MemoryKind.EVENT;
    double confidence = DEFAULT_CONFIDENCE;
    boolean memorable = true;
    if (metadata != null) {
      JsonBody meta = JsonBody.of(metadata);
      kind = meta.optionalString("memoryKind", 64).map(MemoryInput::kind).orElse(kind);
      confidence = meta.optionalNumber("confidence", 0, 1).orElse(confidence);
      memorable = meta.optionalBoolean("memorable").orElse(true);
    }
    List<Statement> statements = new ArrayList<>();
    if (!memorable) {
      return new Plan(List.of(new Statement(text, "not_memorable")), kind, confidence);
    }
    Set<String> seen = new HashSet<>();
    int staged = 0;
    for (String raw : STATEMENT_END.split(text)) {
      String statement = raw.strip();
      if (statement.isEmpty()) {
        continue;
      }
      String reason = skipReason(statement, seen, alreadyKnown, staged);
      statements.add(new Statement(statement, reason));
      if (reason == null) {
        staged++;
      }
    }
    return new Plan(List.copyOf(statements), kind, confidence);
  }

  private static String skipReason(
      String statement, Set<String> seen, Predicate<String> alreadyKnown, int staged) {
    if (WORD.matcher(statement)
            .results()
            .filter(word -> !VisibleText.isEmpty(word.group()))
            .count()
        < MIN_WORDS) {
      return "too_short";
    }
    if (statement.endsWith("?")) {
      return "question";
    }
    if (!seen.add(normalized(statement))) {
      return "duplicate";
    }
    if (alreadyKnown.test(statement)) {
      return "already_known";
    }
    return staged >= MAX_CANDIDATES ? "limit" : null;
  }

  static String normalized(String statement) {
    return statement.toLowerCase(Locale.ROOT).replaceAll("\\s+", " ");
  }
}
