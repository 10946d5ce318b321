package io.engram.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

/** A memory's text as the index sees it: lowercased, stemmed content terms, stop words removed. */
public final class MemoryText {
  private static final MemoryAnalyzer ANALYZER = new MemoryAnalyzer();

  private MemoryText() {}

  /** The distinct content terms of {@code text}, in order of first appearance. */
  public static Set<String> terms(String text) {
    Set<String> terms = new LinkedHashSet<>();
    try (TokenStream tokens = ANALYZER.tokenStream("text", text)) {
      CharTermAttribute term = tokens.addAttribute(CharTermAttribute.class);
      tokens.reset();
      while (tokens.incrementToken()) {
        terms.add(term.toString());
      }
      tokens.end();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot analyze memory text", e);
    }
    return terms;
  }
}
