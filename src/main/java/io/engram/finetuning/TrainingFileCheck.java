package io.engram.finetuning;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.platform.json.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads a training file in OpenAI's chat format, one JSON object per line: {@code {"messages":
 * [{"role": "system"|"user"|"assistant", "content": "...", "weight": 0|1}, ...]}}. Every bad
 * line is reported with its number and why (not JSON, no messages, an unknown role, content not
 * text, no assistant turn to learn from), so a file is fixed in one pass.
 */
public final class TrainingFileCheck {
  static final int MAX_PROBLEMS = 1000;
  static final int MAX_LINE_CHARS = 1_000_000;
  private static final Set<String> ROLES =
      Set.of(ChatMessage.SYSTEM, ChatMessage.USER, ChatMessage.ASSISTANT);

  /** One conversation of the file; {@code trained[i]}: whether message i is learned from. */
  public record Conversation(int line, List<ChatMessage> messages, boolean[] trained) {}

  /** A line that is not a usable example. */
  public record Problem(int line, String reason) {}

  /** What the file holds: its conversations, and every problem found (up to {@link #MAX_PROBLEMS}). */
  public record Report(List<Conversation> conversations, List<Problem> problems, int problemCount) {
    public boolean valid() {
      return problemCount == 0 && !conversations.isEmpty();
    }

    /** The problems in a sentence for an error message: the first few, and how many in all. */
    public String summary() {
      if (conversations.isEmpty() && problemCount == 0) {
        return "the file has no examples";
      }
      StringBuilder text = new StringBuilder();
      text.append(problemCount).append(problemCount == 1 ? " bad line: " : " bad lines: ");
      for (int i = 0; i < Math.min(5, problems.size()); i++) {
        Problem problem = problems.get(i);
        text.append(i == 0 ? "" : "; ")
            .append("line ")
            .append(problem.line())
            .append(": ")
            .append(problem.reason());
      }
      if (problemCount > 5) {
        text.append("; and ").append(problemCount - 5).append(" more");
      }
      return text.toString();
    }
  }

  private TrainingFileCheck() {}

  public static Report read(InputStream in) throws IOException {
    var decoder = StandardCharsets.UTF_8
        .newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    List<Conversation> conversations = new ArrayList<>();
    List<Problem> problems = new ArrayList<>();
    int count = 0;
    int number = 0;
    try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, decoder))) {
      String line;
      while ((line = reader.readLine()) != null) {
        number++;
        if (line.isBlank()) {
          continue;
        }
        String reason;
        try {
          reason = conversation(number, line, conversations);
        } catch (RuntimeException e) {
          reason = "not valid JSON";
        }
        if (reason != null) {
          count++;
          if (problems.size() < MAX_PROBLEMS) {
            problems.add(new Problem(number, reason));
          }
        }
      }
    } catch (CharacterCodingException e) {
      problems.add(new Problem(number + 1, "not UTF-8 text"));
      count++;
    }
    return new Report(conversations, problems, count);
  }

  /** Adds the line's conversation, or says what is wrong with it. */
  private static String conversation(int number, String line, List<Conversation> into)
      throws IOException {
    if (line.length() > MAX_LINE_CHARS) {
      return "longer than " + MAX_LINE_CHARS + " characters";
    }
    JsonNode node;
    try {
      node = Json.MAPPER.readTree(line);
    } catch (IOException e) {
      return "not valid JSON";
    }
    if (node == null || !node.isObject()) {
      return "not a JSON object";
    }
    JsonNode messages = node.path("messages");
    if (!messages.isArray() || messages.isEmpty()) {
      return "'messages' must be a non-empty array";
    }
    List<ChatMessage> parsed = new ArrayList<>();
    boolean[] trained = new boolean[messages.size()];
    boolean learns = false;
    for (int i = 0; i < messages.size(); i++) {
      JsonNode message = messages.get(i);
      String role = message.path("role").asText("");
      if (!ROLES.contains(role)) {
        return "message " + (i + 1) + " has role '" + role
            + "'; roles are system, user and assistant";
      }
      if (!message.path("content").isTextual()) {
        return "message " + (i + 1) + " has no text 'content'";
      }
      JsonNode weight = message.path("weight");
      if (!weight.isMissingNode()
          && !(weight.isInt() && (weight.asInt() == 0 || weight.asInt() == 1))) {
        return "message " + (i + 1) + " has a 'weight' other than 0 or 1";
      }
      if (role.equals(ChatMessage.SYSTEM) && i > 0) {
        return "message " + (i + 1) + " is a system message after the first";
      }
      trained[i] = role.equals(ChatMessage.ASSISTANT) && weight.asInt(1) == 1;
      learns |= trained[i];
      parsed.add(new ChatMessage(role, message.path("content").asText()));
    }
    if (!learns) {
      return "no assistant message to learn from";
    }
    into.add(new Conversation(number, List.copyOf(parsed), trained));
    return null;
  }
}
