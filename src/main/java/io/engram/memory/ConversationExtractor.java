package io.engram.memory;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What is worth remembering in a conversation, found by rules, not by a model: so it runs on every
 * deployment (a model is optional here) and answers the same way twice. It reads what the user
 * said, sentence by sentence, and keeps the statements that last: standing rules ("from now on,
 * always quote in euros": instruction), decisions ("we decided to ship on Fridays": event),
 * preferences ("I prefer email"), facts about the user or the organization ("our fiscal year
 * starts in April", "I work in Lyon") and what the user asks to be remembered ("remember that...":
 * fact). Questions, greetings, thanks and fragments are left out.
 */
final class ConversationExtractor {
  static final int MIN_WORDS = 4;
  static final int MAX_WORDS = 60;
  static final double CONFIDENCE = 0.8;

  /** A statement found, with the kind it reads as and the message it came from. */
  record Proposal(String text, MemoryKind kind, int message) {}

  private static final Pattern SENTENCE = Pattern.compile("(?<=[.!?])\\s+|\\n+");
  private static final Pattern REMEMBER = Pattern.compile(
      "^(please\\s+)?(remember|note|keep in mind)(\\s+that)?[,:]?\\s+", Pattern.CASE_INSENSITIVE);
  private static final Pattern PREFERENCE = Pattern.compile(
      "\\b(i|we)\\s+(really\\s+|much\\s+|always\\s+)?(prefer|like|love|hate|dislike|enjoy|want|need)\\b"
          + "|\\bmy\\s+favou?rite\\b|\\b(i|we)\\s+(don't|do not|never)\\s+(like|want|use)\\b",
      Pattern.CASE_INSENSITIVE);
  private static final Pattern RULE = Pattern.compile(
      "\\bfrom now on\\b|\\b(always|never)\\s+(quote|use|send|answer|reply|call|write|include)\\b",
      Pattern.CASE_INSENSITIVE);
  private static final Pattern DECISION = Pattern.compile(
      "\\b(we|i)\\s+(have\\s+)?(decided|agreed|chose|chosen|settled on|committed)\\b",
      Pattern.CASE_INSENSITIVE);
  private static final Pattern FACT = Pattern.compile(
      "\\b(my|our)\\s+[\\w'-]+(\\s+[\\w'-]+){0,3}\\s+(is|are|was|were|starts|ends|opens|closes)\\b"
          + "|\\b(i am|i'm|we are|we're)\\s+(a|an|the|based|located|from|in)\\b"
          + "|\\b(i|we)\\s+(work|live|use|run|own|manage|sell|ship|report)\\b",
      Pattern.CASE_INSENSITIVE);
  private static final Set<String> SMALL_TALK = Set.of(
      "hi", "hello", "hey", "thanks", "thank you", "ok", "okay", "good morning", "good evening");

  private ConversationExtractor() {}

  /** The statements of the user messages ({@code role} user), in order, each once. */
  static List<Proposal> extract(List<String> roles, List<String> contents) {
    List<Proposal> found = new ArrayList<>();
    Set<String> seen = new LinkedHashSet<>();
    for (int i = 0; i < contents.size(); i++) {
      if (!"user".equals(roles.get(i))) {
        continue;
      }
      for (String raw : SENTENCE.split(contents.get(i))) {
        String sentence = raw.strip();
        boolean asked = REMEMBER.matcher(sentence).find();
        String text = capitalized(REMEMBER.matcher(sentence).replaceFirst("").strip());
        MemoryKind kind = kindOf(text, asked);
        if (kind != null && worthKeeping(text) && seen.add(text.toLowerCase(Locale.ROOT))) {
          found.add(new Proposal(withStop(text), kind, i));
        }
      }
    }
    return found;
  }

  private static MemoryKind kindOf(String text, boolean asked) {
    if (RULE.matcher(text).find()) {
      return MemoryKind.INSTRUCTION;
    }
    if (DECISION.matcher(text).find()) {
      return MemoryKind.EVENT;
    }
    if (PREFERENCE.matcher(text).find()) {
      return MemoryKind.PREFERENCE;
    }
    if (FACT.matcher(text).find() || asked) {
      return MemoryKind.FACT;
    }
    return null;
  }

  private static boolean worthKeeping(String text) {
    String bare = text.replaceAll("[.!]+$", "").strip();
    int words = bare.isEmpty() ? 0 : bare.split("\\s+").length;
    return !bare.endsWith("?")
        && words >= MIN_WORDS
        && words <= MAX_WORDS
        && !SMALL_TALK.contains(bare.toLowerCase(Locale.ROOT));
  }

  private static String capitalized(String text) {
    return text.isEmpty() ? text : Character.toUpperCase(text.charAt(0)) + text.substring(1);
  }

  private static String withStop(String text) {
    return text.matches(".*[.!]$") ? text : text + ".";
  }
}
