package io.engram.inference.local;

import com.github.tjake.jlama.safetensors.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Turns generated token ids into text, one request at a time. jlama's {@code decode(id)} keeps
 * the bytes of a half-decoded character in a buffer shared by every caller of the tokenizer, so
 * concurrent requests (or one that ended mid-character) corrupt each other's text. Here
 * byte-fallback tokens ({@code <0xNN>}) are collected per request and released as whole UTF-8
 * characters; other tokens go through the tokenizer's stateless path.
 */
final class Detokenizer {
  private final Tokenizer tokenizer;
  private final long byteOffset;
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
  private boolean started;

  Detokenizer(Tokenizer tokenizer) {
    this.tokenizer = tokenizer;
    Long offset =
        tokenizer.getModel().byteFallback ? tokenizer.getModel().vocabLookup.get("<0x00>") : null;
    this.byteOffset = offset == null ? -1 : offset;
  }

  /** The text this token adds (possibly empty while a character is incomplete). */
  String next(long id) {
    String text;
    if (byteOffset >= 0 && id >= byteOffset && id < byteOffset + 256) {
      pending.write((int) (id - byteOffset));
      text = completeCharacters();
    } else {
      text = flush() + tokenizer.decode(id);
    }
    if (!started) {
      // SentencePiece marks a word start with a space; the reply's first word has none.
      text = text.stripLeading();
      started = !text.isEmpty();
    }
    return text;
  }

  /** Bytes left at the end: decoded as they are (an incomplete character becomes U+FFFD). */
  String flush() {
    if (pending.size() == 0) {
      return "";
    }
    String text = pending.toString(StandardCharsets.UTF_8);
    pending.reset();
    return text;
  }

  private String completeCharacters() {
    byte[] bytes = pending.toByteArray();
    int complete = completePrefix(bytes);
    if (complete == 0) {
      return "";
    }
    String text = new String(bytes, 0, complete, StandardCharsets.UTF_8);
    pending.reset();
    pending.write(bytes, complete, bytes.length - complete);
    return text;
  }

  /** The length of the longest prefix made of whole UTF-8 sequences (invalid bytes count as whole). */
  static int completePrefix(byte[] bytes) {
    int i = 0;
    while (i < bytes.length) {
      int lead = bytes[i] & 0xFF;
      int length = lead < 0x80
          ? 1
          : lead >= 0xF0 && lead < 0xF8 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
      if (i + length > bytes.length) {
        break;
      }
      i += length;
    }
    return i;
  }
}
