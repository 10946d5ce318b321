package io.engram.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SecretFormatTest {

  @Test
  void eachKindHasItsOwnPrefixAndAVerifiableChecksum() {
    for (CredentialKind kind : CredentialKind.values()) {
      String secret = SecretFormat.generate(kind.prefix());
      assertThat(secret).startsWith(kind.prefix() + "_").hasSize(kind.prefix().length() + 39);
      assertThat(SecretFormat.isWellFormed(kind.prefix(), secret)).isTrue();
      assertThat(CredentialKind.ofSecret(secret)).hasValue(kind);
    }
  }

  @Test
  void aSingleChangedCharacterFailsTheChecksum() {
    String secret = SecretFormat.generate("engk");
    int failures = 0;
    for (int i = 5; i < secret.length(); i++) {
      char replacement = secret.charAt(i) == 'a' ? 'b' : 'a';
      String tampered = secret.substring(0, i) + replacement + secret.substring(i + 1);
      if (!SecretFormat.isWellFormed("engk", tampered)) {
        failures++;
      }
    }
    assertThat(failures).isEqualTo(secret.length() - 5);
    assertThat(SecretFormat.isWellFormed("engc", secret)).isFalse();
    assertThat(SecretFormat.isWellFormed("engk", secret + "x")).isFalse();
  }

  @Test
  void secretsAreUniqueAndHashedDeterministically() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      assertThat(seen.add(SecretFormat.generate("engc"))).isTrue();
    }
    String secret = SecretFormat.generate("engc");
    assertThat(SecretFormat.hash(secret))
        .isEqualTo(SecretFormat.hash(secret))
        .hasSize(64)
        .doesNotContain(secret);
    assertThat(SecretFormat.hint(secret))
        .isEqualTo("engc_..." + secret.substring(secret.length() - 4));
  }

  @Test
  void passwordsVerifyOnlyWithTheRightPassword() {
    String stored = PasswordHasher.hash("correct horse battery");
    assertThat(stored).startsWith("pbkdf2-sha256$600000$").doesNotContain("correct");
    assertThat(PasswordHasher.verify("correct horse battery", stored)).isTrue();
    assertThat(PasswordHasher.verify("correct horse battery!", stored)).isFalse();
    assertThat(PasswordHasher.verify("anything", null)).isFalse();
  }
}
