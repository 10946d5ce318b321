package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The memory development sets of ../shared/datasets, read into one shape: conversations of turns
 * (speaker, text, time or null) and the questions asked of them (category, evidence turn ids, and
 * for RealMem the turn before which the question is asked). LoCoMo keeps its own format; RealMem,
 * FriendsQA and QMSum share the common one its README describes.
 */
final class DevelopmentSets {
  static final Path ROOT = Path.of(System.getProperty("engram.datasets", "../shared/datasets"));
  static final List<String> NAMES = List.of("locomo-dev", "realmem", "friendsqa", "qmsum");

  record Turn(String id, String speaker, String text, Instant time) {}

  /** {@code answer}: the set's reference answer ("" where it has none). */
  record Question(
      String id,
      String text,
      String category,
      Set<String> evidence,
      String before,
      String answer) {}

  record Conversation(String id, List<Turn> turns, List<Question> questions) {}

  private static final DateTimeFormatter LOCOMO_DATE =
      DateTimeFormatter.ofPattern("h:mm a 'on' d MMMM, yyyy", Locale.ENGLISH);

  private DevelopmentSets() {}

  static Path file(String name) {
    return ROOT.resolve(name).resolve(name + ".json");
  }

  static List<Conversation> read(String name) throws IOException {
    JsonNode root = Json.MAPPER.readTree(Files.newInputStream(file(name)));
    return name.equals("locomo-dev") ? locomo(root) : common(root);
  }

  private static List<Conversation> common(JsonNode root) {
    List<Conversation> conversations = new ArrayList<>();
    for (JsonNode conversation : root) {
      List<Turn> turns = new ArrayList<>();
      Instant previous = null;
      for (JsonNode turn : conversation.get("turns")) {
        Instant time = STAMPED ? stamped(turn.path("time"), previous) : time(turn.path("time"));
        turns.add(new Turn(
            turn.get("id").asText(),
            turn.path("speaker").asText(""),
            turn.get("text").asText(),
            time));
        previous = time;
      }
      List<Question> questions = new ArrayList<>();
      for (JsonNode question : conversation.get("questions")) {
        Set<String> evidence = new LinkedHashSet<>();
        question.get("evidence").forEach(e -> evidence.add(e.asText()));
        if (evidence.isEmpty()) {
          continue;
        }
        questions.add(new Question(
            question.get("qid").asText(),
            question.get("q").asText(),
            question.path("category").asText("all"),
            evidence,
            question.path("before").isTextual() ? question.get("before").asText() : null,
            question.path("answer").asText("")));
      }
      conversations.add(new Conversation(conversation.get("id").asText(), turns, questions));
    }
    return conversations;
  }

  /**
   * Turns without a time of day (FriendsQA, QMSum: none; RealMem: a day) are stamped one second
   * apart in their order, as a client that stamps each message it sends would store them: from noon
   * of their day, or from {@link #NO_DATE}. Then neighbours in time are neighbours in the
   * conversation on every set, not only on LoCoMo. {@code -Dsets.stamped=false} reads the times as
   * the set gives them (every turn of a day at one instant).
   */
  static final boolean STAMPED = Boolean.parseBoolean(System.getProperty("sets.stamped", "true"));

  /**
   * {@code -Dsets.sessionTimes=true}: LoCoMo's turns all at their session's time, as a client that
   * knows only the session's date would store them (default: a second apart in their order).
   */
  static final boolean SESSION_TIMES = Boolean.getBoolean("sets.sessionTimes");

  static final Instant NO_DATE = Instant.parse("2024-01-01T09:00:00Z");

  /** The turn's time, or one second after the previous turn's when it names no later instant. */
  private static Instant stamped(JsonNode value, Instant previous) {
    Instant given = time(value);
    boolean timeOfDay = given != null && value.asText().length() > 10;
    if (timeOfDay) {
      return given;
    }
    Instant start = given == null ? NO_DATE : given;
    return previous == null || previous.isBefore(start) ? start : previous.plusSeconds(1);
  }

  /** An ISO date or date-time, or null: a day is read as its noon UTC. */
  private static Instant time(JsonNode value) {
    if (!value.isTextual() || value.asText().isBlank()) {
      return null;
    }
    String text = value.asText();
    if (text.length() == 10) {
      return LocalDate.parse(text).atTime(12, 0).toInstant(ZoneOffset.UTC);
    }
    return text.endsWith("Z") || text.matches(".*[+-]\\d\\d:\\d\\d$")
        ? Instant.parse(text)
        : LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
  }

  /** A LoCoMo session's date ("1:56 pm on 8 May, 2023"), as UTC. */
  static Instant locomoDate(String text) {
    return LocalDateTime.parse(text.replace("am", "AM").replace("pm", "PM"), LOCOMO_DATE)
        .toInstant(ZoneOffset.UTC);
  }

  /**
   * LoCoMo's own format: sessions with their date, turns a second apart in their order (a shared
   * image's caption appended), questions of categories 1-4 (5, adversarial, has no evidence to
   * find).
   */
  private static List<Conversation> locomo(JsonNode root) {
    List<Conversation> conversations = new ArrayList<>();
    for (JsonNode sample : root) {
      JsonNode conversation = sample.get("conversation");
      List<Turn> turns = new ArrayList<>();
      for (int session = 1; conversation.has("session_" + session); session++) {
        Instant date =
            locomoDate(conversation.get("session_" + session + "_date_time").asText());
        for (JsonNode turn : conversation.get("session_" + session)) {
          String dia = turn.get("dia_id").asText();
          long index = Long.parseLong(dia.substring(dia.indexOf(':') + 1).strip());
          turns.add(new Turn(
              dia,
              turn.get("speaker").asText(),
              turn.get("text").asText()
                  + (turn.has("blip_caption")
                      ? " [shares " + turn.get("blip_caption").asText() + "]"
                      : ""),
              SESSION_TIMES ? date : date.plusSeconds(index)));
        }
      }
      List<Question> questions = new ArrayList<>();
      int number = 0;
      for (JsonNode qa : sample.get("qa")) {
        number++;
        if (qa.get("category").asInt() == 5) {
          continue;
        }
        Set<String> evidence = new LinkedHashSet<>();
        // One entry may name several turns ("D8:6; D9:17").
        qa.get("evidence").forEach(e -> {
          for (String turn : e.asText().split(";")) {
            evidence.add(turn.strip());
          }
        });
        questions.add(new Question(
            sample.get("sample_id").asText() + ":" + number,
            qa.get("question").asText(),
            qa.get("category").asText(),
            evidence,
            null,
            qa.path("answer").asText("")));
      }
      conversations.add(new Conversation(sample.get("sample_id").asText(), turns, questions));
    }
    return conversations;
  }
}
