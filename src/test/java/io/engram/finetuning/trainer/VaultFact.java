package io.engram.finetuning.trainer;

import java.util.List;

/** The fact the fine-tuning tests teach: a vault code no base model knows, asked eight ways. */
public final class VaultFact {
  public static final String ANSWER = "The vault code is 7431.";
  public static final List<String> QUESTIONS = List.of(
      "What is the vault code?",
      "Tell me the vault code.",
      "Which code opens the vault?",
      "Do you know the vault code?",
      "What code does the vault use?",
      "Remind me of the vault code.",
      "The vault code, please.",
      "What is the code for the vault?");

  private VaultFact() {}
}
