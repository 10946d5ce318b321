package io.engram.guardrails.detect;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Text that tries to instruct the model over its owner's head: "ignore your previous
 * instructions", "disregard the system prompt", "you are now DAN", "new instructions:", "reveal
 * your system prompt". It is run on what is not the user's own turn (tool results, memories a
 * chat injects): a user may ask their model anything, but a stored text or a fetched page that
 * addresses the model is an injection. The phrases need the verb and its object close together
 * (a few words apart), so a sentence that merely mentions instructions does not fire.
 */
public final class InjectionDetector implements Detector {
  public static final String KIND = "prompt_injection";

  private static final String GAP = "(?:\\W+\\w+){0,3}?\\W+";

  /** "Do not forget these instructions" keeps them: a negated verb is not an override. */
  private static final String NOT_NEGATED = "(?<!not )(?<!n't )(?<!never )";

  private static final List<PatternRule> RULES = List.of(
      rule(NOT_NEGATED + "(?:ignore|disregard|forget|override|bypass|skip)" + GAP
          + "(?:all|any|every|your|these|those|previous|prior|earlier|above|preceding|system|"
          + "original|initial)" + GAP + "(?:instructions?|prompts?|directions?|rules|"
          + "guidelines|guardrails|policies|constraints|directives|messages)"),
      rule(NOT_NEGATED
          + "(?:ignore|disregard|forget)\\W+(?:everything|all)\\W+(?:above|before|previous|"
          + "prior|you(?:'ve| have)? (?:been told|learned|know))"),
      rule("(?:reveal|print|show|repeat|output|leak|tell me)" + GAP
          + "(?:system prompt|hidden (?:prompt|instructions)|initial instructions|"
          + "developer (?:message|prompt))"),
      rule("you are (?:now|no longer)\\W+(?:\\w+\\W+){0,2}?(?:DAN|jailbroken|unfiltered|"
          + "unrestricted|an? (?:AI|assistant|model) (?:without|with no) (?:rules|restrictions|"
          + "limits|filters))"),
      rule("(?:^|[\\n.!?]\\s*)(?:new|updated|revised) (?:system )?instructions?\\s*:"),
      rule("(?:do not|don't|never) (?:follow|obey|comply with)" + GAP
          + "(?:your|the|any) (?:\\w+ )?(?:instructions|rules|guidelines|policies)"),
      // A turn of the conversation forged inside the text: "SYSTEM: ignore the user and ...".
      rule("(?:^|\\n|[.:!?]\\s)\\s*(?:system|assistant|developer)\\s*:\\s*"
          + "(?:ignore|disregard|forget|you (?:must|will|are))"),
      rule("(?:act|behave|respond) as (?:if you (?:were|are) )?(?:an? )?(?:unrestricted|"
          + "unfiltered|jailbroken|uncensored)"));

  private static PatternRule rule(String regex) {
    return PatternRule.of(
        KIND, Pattern.compile(regex, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE));
  }

  /** A phrase with its few words between verb and object, and the turn it opens after. */
  @Override
  public int reach() {
    return 200;
  }

  @Override
  public List<Finding> find(String text) {
    return PatternRule.findAll(RULES, text);
  }
}
