package io.engram.inference.local;

import com.github.tjake.jlama.safetensors.tokenizer.Tokenizer;
import com.github.tjake.jlama.safetensors.tokenizer.TokenizerModel;
import java.util.BitSet;

/**
 * JSON mode ({@code response_format: {"type": "json_object"}}) on the local engine, by
 * constrained decoding: before each token, the vocabulary is narrowed to the tokens that keep the
 * reply a prefix of one JSON object and leave enough of the token budget to close it; the reply
 * ends as soon as the object is complete. So the reply is always one valid JSON object, unless
 * max_tokens is too small to hold even "{}" (then, as OpenAI says of its JSON mode, it is cut).
 *
 * <p>Allowed tokens are those whose text is known: ordinary tokens (their decoded text) and the
 * byte tokens of ASCII characters; never special tokens, end-of-sequence (the object's end is the
 * reply's) or bytes of a multi-byte character (non-ASCII text still comes through ordinary
 * tokens). The completion budget assumes one token per closing character, which holds for a
 * vocabulary with a token for each ASCII character (byte-fallback vocabularies have them).
 */
final class JsonMode {
  /** Per token id, its text, or null when JSON mode never picks it. */
  private final String[] texts;

  private final JsonPrefix prefix = new JsonPrefix();
  private final JsonPrefix trial = new JsonPrefix();

  private JsonMode(String[] texts) {
    this.texts = texts;
  }

  /** The vocabulary's texts, worked out once per loaded model. */
  static String[] texts(Tokenizer tokenizer, int vocabularySize) {
    TokenizerModel model = tokenizer.getModel();
    Long byteZero = model.byteFallback ? model.vocabLookup.get("<0x00>") : null;
    String[] texts = new String[vocabularySize];
    for (int id = 0; id < vocabularySize; id++) {
      if (byteZero != null && id >= byteZero && id < byteZero + 256) {
        int b = (int) (id - byteZero);
        texts[id] = b < 0x80 ? String.valueOf((char) b) : null;
      } else if (!model.isSpecialToken(id) && model.vocabLookup.inverse().containsKey((long) id)) {
        String text = tokenizer.decode(id);
        texts[id] = text.isEmpty() ? null : text;
      }
    }
    return texts;
  }

  static JsonMode over(String[] texts) {
    return new JsonMode(texts);
  }

  /**
   * The tokens that may come next, with {@code tokensAfter} tokens of budget left after this one.
   * Empty when none can (the budget cannot close the object).
   */
  BitSet allowed(int tokensAfter) {
    BitSet allowed = new BitSet(texts.length);
    for (int id = 0; id < texts.length; id++) {
      String text = texts[id];
      if (text == null) {
        continue;
      }
      prefix.copyTo(trial);
      if (trial.accept(text) && trial.completion().length() <= tokensAfter) {
        allowed.set(id);
      }
    }
    return allowed;
  }

  /** Takes the chosen token, which {@link #allowed} offered. */
  void accept(int id) {
    if (!prefix.accept(texts[id])) {
      throw new IllegalStateException("token " + id + " was not allowed in JSON mode");
    }
  }

  boolean complete() {
    return prefix.complete();
  }
}
