package io.engram.memory;

import java.util.List;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.en.EnglishPossessiveFilter;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

/**
 * The lexical analysis of memories and queries: English words, lowercased, possessives removed,
 * Porter-stemmed, and a stop list much longer than Lucene's English default. Memories are
 * conversational and queries are questions, so words such as "what", "did", "you" and "would"
 * appear in both everywhere; left in, they reward memories for sounding like a question rather
 * than for being about its subject (measured on LoCoMo: docs/benchmarks.md).
 */
public final class MemoryAnalyzer extends Analyzer {
  static final CharArraySet STOP_WORDS = new CharArraySet(
      List.of(
          "a",
          "about",
          "above",
          "after",
          "again",
          "against",
          "all",
          "am",
          "an",
          "and",
          "any",
          "are",
          "as",
          "at",
          "be",
          "because",
          "been",
          "before",
          "being",
          "below",
          "between",
          "both",
          "but",
          "by",
          "can",
          "could",
          "did",
          "do",
          "does",
          "doing",
          "down",
          "during",
          "each",
          "few",
          "for",
          "from",
          "further",
          "had",
          "has",
          "have",
          "having",
          "he",
          "her",
          "here",
          "hers",
          "herself",
          "him",
          "himself",
          "his",
          "how",
          "i",
          "if",
          "in",
          "into",
          "is",
          "it",
          "its",
          "itself",
          "just",
          "me",
          "might",
          "more",
          "most",
          "must",
          "my",
          "myself",
          "no",
          "nor",
          "not",
          "now",
          "of",
          "off",
          "on",
          "once",
          "only",
          "or",
          "other",
          "ought",
          "our",
          "ours",
          "ourselves",
          "out",
          "over",
          "own",
          "same",
          "shall",
          "she",
          "should",
          "so",
          "some",
          "such",
          "than",
          "that",
          "the",
          "their",
          "theirs",
          "them",
          "themselves",
          "then",
          "there",
          "these",
          "they",
          "this",
          "those",
          "through",
          "to",
          "too",
          "under",
          "until",
          "up",
          "very",
          "was",
          "we",
          "were",
          "what",
          "when",
          "where",
          "which",
          "while",
          "who",
          "whom",
          "whose",
          "why",
          "will",
          "with",
          "would",
          "you",
          "your",
          "yours",
          "yourself",
          "yourselves",
          "also",
          "yeah",
          "yes",
          "oh",
          "wow",
          "hey",
          "hi",
          "thanks",
          "thank",
          "really",
          "much",
          "lot",
          "likely",
          "kind"),
      false);

  @Override
  protected TokenStreamComponents createComponents(String fieldName) {
    Tokenizer source = new StandardTokenizer();
    TokenStream stream = new EnglishPossessiveFilter(source);
    stream = new LowerCaseFilter(stream);
    stream = new StopFilter(stream, STOP_WORDS);
    stream = new PorterStemFilter(stream);
    return new TokenStreamComponents(source, stream);
  }

  @Override
  protected TokenStream normalize(String fieldName, TokenStream in) {
    return new LowerCaseFilter(in);
  }

  /**
   * The query's analyzed terms with their counts, the first {@code max} distinct ones: a long query
   * must not exceed the engine's clause limit (1,024), which would fail the request.
   */
  public static java.util.Map<String, Integer> queryTerms(
      Analyzer analyzer, String queryText, int max) {
    java.util.Map<String, Integer> terms = new java.util.LinkedHashMap<>();
    forEachTerm(analyzer, queryText, text -> {
      if (terms.containsKey(text) || terms.size() < max) {
        terms.merge(text, 1, Integer::sum);
      }
    });
    return terms;
  }

  /**
   * The text as this analyzer indexes it, its terms separated by single spaces: what an engine
   * that only splits on spaces (Solr, {@code io.engram.memory.solr}) indexes, so that both engines
   * hold the same terms with the same counts and lengths.
   */
  public static String analyzed(Analyzer analyzer, String text) {
    StringBuilder out = new StringBuilder(text.length());
    forEachTerm(analyzer, text, term -> {
      if (!out.isEmpty()) {
        out.append(' ');
      }
      out.append(term);
    });
    return out.toString();
  }

  private static void forEachTerm(
      Analyzer analyzer, String text, java.util.function.Consumer<String> each) {
    try (TokenStream tokens = analyzer.tokenStream(MemoryDocument.TEXT, text)) {
      CharTermAttribute term = tokens.addAttribute(CharTermAttribute.class);
      tokens.reset();
      while (tokens.incrementToken()) {
        each.accept(term.toString());
      }
      tokens.end();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot analyze the text", e);
    }
  }
}
