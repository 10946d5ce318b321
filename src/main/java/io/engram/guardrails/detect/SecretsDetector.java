package io.engram.guardrails.detect;

import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Credentials by their published formats: OpenAI, Anthropic, AWS (access key ids, and a secret
 * access key where it is named), GitHub, Slack, Stripe and Google API keys, private key blocks,
 * JSON Web Tokens, and connection strings that carry a password. Each format has a prefix or a
 * shape ordinary text does not; a 40-character secret access key has neither, so it is taken only
 * beside its name.
 */
public final class SecretsDetector implements Detector {
  private static final String TOKEN_END = "(?![A-Za-z0-9_-])";

  /**
   * What each kind's every match holds, looked for before its pattern runs (most texts hold none):
   * a published prefix, the name beside an AWS secret key, a URL's scheme separator.
   */
  private static final java.util.Map<String, Predicate<String>> HOLDS = java.util.Map.ofEntries(
      java.util.Map.entry("anthropic_key", PatternRule.holding("sk-ant-")),
      java.util.Map.entry("openai_key", PatternRule.holding("sk-")),
      java.util.Map.entry("aws_access_key", PatternRule.holding("AKIA", "ASIA", "ABIA", "ACCA")),
      java.util.Map.entry("aws_secret_key", SecretsDetector::namesASecret),
      java.util.Map.entry(
          "github_token",
          PatternRule.holding("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
      java.util.Map.entry("slack_token", PatternRule.holding("xox", "hooks.slack.com")),
      java.util.Map.entry("stripe_key", PatternRule.holding("_live_", "_test_")),
      java.util.Map.entry("google_api_key", PatternRule.holding("AIza")),
      java.util.Map.entry("private_key", PatternRule.holding("PRIVATE KEY")),
      java.util.Map.entry("jwt", PatternRule.holding("eyJ")),
      java.util.Map.entry(
          "connection_string", text -> text.contains("://") && text.indexOf('@') >= 0));

  /**
   * Where a kind's match can be, when it starts a few characters before its literal: the regex
   * runs only there (a look-behind tried at every position of a text costs 25 ns a character),
   * its look-arounds seeing past the span. The spans' ends bound the longest match.
   */
  private static final java.util.Map<String, Function<String, List<int[]>>> NEAR =
      java.util.Map.ofEntries(
          java.util.Map.entry("anthropic_key", PatternRule.aroundAny(0, 230, "sk-ant-")),
          java.util.Map.entry("openai_key", PatternRule.aroundAny(0, 230, "sk-")),
          java.util.Map.entry(
              "aws_access_key", PatternRule.aroundAny(0, 16, "AKIA", "ASIA", "ABIA", "ACCA")),
          java.util.Map.entry(
              "github_token",
              PatternRule.aroundAny(0, 260, "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
          java.util.Map.entry(
              "slack_token", PatternRule.aroundAny(8, 400, "xox", "hooks.slack.com")),
          java.util.Map.entry("stripe_key", PatternRule.aroundAny(2, 260, "_live_", "_test_")),
          java.util.Map.entry("google_api_key", PatternRule.aroundAny(0, 40, "AIza")),
          java.util.Map.entry("private_key", PatternRule.aroundAny(60, 8_200, "PRIVATE KEY")),
          java.util.Map.entry("jwt", PatternRule.aroundAny(0, 13_100, "eyJ")));

  private static final List<PatternRule> RULES = Stream.of(
          PatternRule.of(
              "anthropic_key",
              "(?<![\\w-])sk-ant-[a-z]{3,8}\\d{2}-[A-Za-z0-9_-]{32,200}" + TOKEN_END),
          PatternRule.of(
                  "openai_key",
                  "(?<![\\w-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,200}" + TOKEN_END)
              .checkedBy(text -> !text.startsWith("sk-ant-") && mixed(text.substring(3))),
          PatternRule.of(
              "aws_access_key",
              "(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
          PatternRule.of(
                  "aws_secret_key",
                  "(?i:aws.{0,20}?secret.{0,20}?|secret_access_key.{0,5}?)[=:\"' ]{1,4}"
                      + "(?-i:[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
              .checkedBy(text -> mixed(text.substring(text.length() - 40))),
          PatternRule.of(
              "github_token",
              "(?<![\\w])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,255})"
                  + "(?![A-Za-z0-9_])"),
          PatternRule.of(
              "slack_token",
              "(?<![\\w-])(?:xox[abposr]-[A-Za-z0-9-]{10,200}"
                  + "|https://hooks\\.slack\\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,})"
                  + TOKEN_END),
          PatternRule.of(
              "stripe_key",
              "(?<![\\w])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{20,250}(?![A-Za-z0-9])"),
          PatternRule.of("google_api_key", "(?<![\\w-])AIza[0-9A-Za-z_-]{35}" + TOKEN_END),
          PatternRule.of(
              "private_key",
              "-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
                  + "[A-Za-z0-9+/=\\s:,-]{0,8000}?(?:-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
                  + "|$)"),
          PatternRule.of(
              "jwt",
              "(?<![\\w-])eyJ[A-Za-z0-9_-]{8,4000}\\.eyJ[A-Za-z0-9_-]{8,8000}\\.[A-Za-z0-9_-]{16,1000}"
                  + TOKEN_END),
          PatternRule.of(
                  "connection_string",
                  "(?<![\\w+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\\s:/@\"'<>]{0,100}:[^\\s@/\"'<>]{1,200}@"
                      + "[A-Za-z0-9.\\[\\]-]{1,253}")
              .checkedBy(SecretsDetector::passwordInUrl))
      .map(rule -> rule.onlyWhere(HOLDS.get(rule.kind())))
      .map(rule -> NEAR.containsKey(rule.kind()) ? rule.within(NEAR.get(rule.kind())) : rule)
      .toList();

  /** A password written as a placeholder: {@code ****}, {@code ${PASS}}, {@code password}. */
  private static final Pattern PLACEHOLDER =
      Pattern.compile("\\*+|x+|X+|\\$\\{?\\w+}?|%\\w+%|password|pass|pwd|secret");

  /** Every kind this detector names its findings. */
  public static final List<String> KINDS = RULES.stream().map(PatternRule::kind).toList();

  /**
   * The longest bounded key, a connection string with its password and host (588), and the
   * boundaries around it. A JSON web token or a private key block may run longer: once their
   * pattern matches up to the end of what has come, that match is held whole until it ends.
   */
  @Override
  public int reach() {
    return 600;
  }

  @Override
  public List<Finding> find(String text) {
    return PatternRule.findAll(RULES, text);
  }

  /** Whether the text says "secret" in any case (without copying it to lower case). */
  private static boolean namesASecret(String text) {
    for (int i = 0; i + 6 <= text.length(); i++) {
      char c = text.charAt(i);
      if ((c == 's' || c == 'S') && text.regionMatches(true, i, "secret", 0, 6)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Letters and digits both, as generated keys have: "sk-the-rest-of-the-sentence" is prose, a
   * 20-character run of one case without a digit is a word.
   */
  private static boolean mixed(String text) {
    boolean digit = false;
    boolean letter = false;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      digit |= Character.isDigit(c);
      letter |= Character.isLetter(c);
    }
    return digit && letter;
  }

  /** A password that is not a placeholder ({@code <password>}, {@code ****}, {@code ${PASS}}). */
  private static boolean passwordInUrl(String text) {
    String rest = text.substring(text.indexOf("://") + 3);
    String password = rest.substring(rest.indexOf(':') + 1, rest.lastIndexOf('@'));
    return !password.isBlank() && !PLACEHOLDER.matcher(password).matches();
  }
}
