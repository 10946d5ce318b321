package io.engram.finetuning.trainer;

import com.github.tjake.jlama.model.llama.LlamaTokenizer;
import com.github.tjake.jlama.safetensors.prompt.PromptSupport;
import com.github.tjake.jlama.safetensors.tokenizer.Tokenizer;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.local.ChatPrompt;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Turns training conversations into token ids the way the local engine will see them when it
 * serves the fine-tuned model: the model's chat template, its tokenizer, its beginning-of-sequence
 * token. The tokens the model learns to produce are each assistant turn's, up to and including the
 * template's end-of-turn marker, so the served model also learns where to stop.
 */
public final class ChatTokenizer {
  private final Tokenizer tokenizer;
  private final PromptSupport prompts;
  private final int bos;

  /** One conversation's tokens and, per position, whether the next token is trained on. */
  public record Example(int[] tokens, boolean[] trainedNext) {
    public int trainedTokens() {
      int n = 0;
      for (boolean trained : trainedNext) {
        n += trained ? 1 : 0;
      }
      return n;
    }
  }

  public ChatTokenizer(Path modelDir) throws IOException {
    try {
      this.tokenizer = new LlamaTokenizer(modelDir);
    } catch (RuntimeException e) {
      throw new LlamaShape.UnsupportedModelException(
          "the model's tokenizer cannot be read: " + e.getMessage());
    }
    this.prompts = tokenizer
        .promptSupport()
        .orElseThrow(() -> new LlamaShape.UnsupportedModelException(
            "the model has no chat template (tokenizer_config.json chat_template)"));
    this.bos = Json.MAPPER
        .readTree(modelDir.resolve("config.json").toFile())
        .path("bos_token_id")
        .asInt(1);
  }

  /**
   * The conversation's tokens; assistant turns whose flag in {@code trained} is false (OpenAI's
   * {@code weight: 0}) are context only.
   */
  public Example encode(List<ChatMessage> messages, boolean[] trained) {
    int[] all = tokens(messages, false);
    boolean[] next = new boolean[all.length];
    for (int i = 0; i < messages.size(); i++) {
      if (!messages.get(i).role().equals(ChatMessage.ASSISTANT) || !trained[i]) {
        continue;
      }
      int[] opened = tokens(messages.subList(0, i), true);
      int[] through = tokens(messages.subList(0, i + 1), false);
      int from = commonPrefix(opened, through);
      int to = Math.min(commonPrefix(through, all), through.length);
      for (int t = Math.max(from, 1); t < to; t++) {
        next[t - 1] = true;
      }
    }
    return new Example(all, next);
  }

  /** The token count of a conversation, without working out which tokens are trained. */
  public int length(List<ChatMessage> messages) {
    return tokens(messages, false).length;
  }

  private int[] tokens(List<ChatMessage> messages, boolean generation) {
    String text = ChatPrompt.render(prompts, messages, generation).getPrompt();
    long[] encoded = tokenizer.encode(text);
    int skip = encoded.length > 0 && encoded[0] == bos ? 1 : 0;
    int[] tokens = new int[encoded.length - skip + 1];
    tokens[0] = bos;
    for (int i = skip; i < encoded.length; i++) {
      tokens[i - skip + 1] = Math.toIntExact(encoded[i]);
    }
    return tokens;
  }

  private static int commonPrefix(int[] a, int[] b) {
    int n = Arrays.mismatch(a, b);
    return n < 0 ? Math.min(a.length, b.length) : n;
  }
}
