package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import io.engram.platform.json.Json;
import java.io.BufferedWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * Levers of issue 42 measured on the candidate pools bench/memory-sets.sh writes (POOL=), for
 * bench/ranking-fit.py to weigh with one set left out (its {@code rescore}, {@code session},
 * {@code entity}, {@code turn}, {@code coverage} and {@code absolute}):
 *
 * <ul>
 *   <li>{@code sim2}: every pooled memory's similarity to its question by a second, stronger model
 *       ("two models: the fast one for the first stage, a better one re-scoring the candidates");
 *   <li>{@code sess}: the question's similarity, by the shipped model, to the centroid of the
 *       memory's session (turns at most 30 minutes apart, those encoded when it was asked): "a
 *       session's centroid lends to its turns";
 *   <li>{@code ent}: the share of the question's names (capitalized words not opening a sentence,
 *       other than the conversation's speakers, whom the subject boost already weighs) that the
 *       memory's text names: "entities matched at query time";
 *   <li>{@code ctx}: the question's similarity, by the shipped model, to the unit sum of the
 *       memory's own vector and its vector embedded after the turn before it: "a turn embedded with
 *       the turn before it";
 *   <li>{@code cov}: the share of the question's weight that the memory's terms match, each term
 *       as the index analyzes it and weighed by its IDF in the conversation: an absolute lexical
 *       signal, where BM25 over the best BM25 among the candidates is relative.
 * </ul>
 *
 * <p>Arguments: the pool in, the pool out, the second model's class (a langchain4j in-process
 * model on the class path: bench/rescore.sh fetches it; {@code none}: no {@code sim2}), its query
 * prefix and its passage prefix.
 */
public final class RescoreBench {
  private static final Duration SESSION_GAP = Duration.ofMinutes(30);
  private static final java.util.regex.Pattern NAME =
      java.util.regex.Pattern.compile("(?<![.?!]\\s)(?<!^)\\b([A-Z][A-Za-z'-]+)");

  private RescoreBench() {}

  /** A conversation's turns, their shipped-model vectors and their sessions. */
  private record Conversation(
      DevelopmentSets.Conversation turns,
      Map<String, Integer> position,
      List<float[]> vectors,
      int[] session,
      List<Set<String>> terms,
      Map<String, Integer> documentFrequency) {}

  public static void main(String[] args) throws Exception {
    Path in = Path.of(args[0]);
    Path out = Path.of(args[1]);
    EmbeddingModel second = args[2].equals("none")
        ? null
        : (EmbeddingModel) Class.forName(args[2]).getConstructor().newInstance();
    String queryPrefix = args.length > 3 ? args[3] : "";
    String passagePrefix = args.length > 4 ? args[4] : "";
    Embedder shipped = Embedder.shared(Files.createTempDirectory("engram-onnx"));
    Map<String, Conversation> conversations = new HashMap<>();
    Map<String, float[]> secondVectors = new HashMap<>();
    Map<String, float[]> withPrevious = new HashMap<>();
    long started = System.nanoTime();
    int questions = 0;
    try (BufferedWriter writer = Files.newBufferedWriter(out)) {
      for (String text : Files.readAllLines(in)) {
        ObjectNode line = (ObjectNode) Json.MAPPER.readTree(text);
        if (line.has("rows")) {
          String set = line.get("set").asText();
          String key = set + "/" + line.get("conversation").asText();
          if (!conversations.containsKey(key)) {
            for (DevelopmentSets.Conversation c : DevelopmentSets.read(set)) {
              conversations.put(set + "/" + c.id(), read(c, shipped));
            }
          }
          Conversation conversation = conversations.get(key);
          String question = conversation.turns().questions().stream()
              .filter(q -> q.id().equals(line.get("question").asText()))
              .findFirst()
              .orElseThrow()
              .text();
          float[] q1 = shipped.embedAll(List.of(question)).getFirst();
          float[] q2 = second == null
              ? null
              : unit(second.embed(queryPrefix + question).content().vector());
          List<DevelopmentSets.Turn> turns = conversation.turns().turns();
          if (second != null) {
            embedMissing(
                key,
                conversation,
                line,
                secondVectors,
                at -> passagePrefix + indexed(turns.get(at)),
                texts ->
                    second
                        .embedAll(texts.stream().map(TextSegment::from).toList())
                        .content()
                        .stream()
                        .map(e -> unit(e.vector()))
                        .toList());
          }
          // Each turn embedded after the one before it (as TurnContextBench: the previous turn's
          // text, a line break, this turn's).
          embedMissing(
              key,
              conversation,
              line,
              withPrevious,
              at -> at == 0
                  ? indexed(turns.get(at))
                  : indexed(turns.get(at - 1)) + "\n" + indexed(turns.get(at)),
              shipped::embedAll);
          List<String> names = names(question, conversation.turns());
          Map<String, Double> weights = idf(question, conversation);
          Map<Integer, Double> bySession = new HashMap<>();
          int encoded = line.path("encoded").asInt(conversation.vectors().size());
          for (JsonNode row : line.get("rows")) {
            String turn = row.get("turn").asText();
            int at = conversation.position().get(turn);
            if (second != null) {
              ((ObjectNode) row).put("sim2", Embedder.dot(q2, secondVectors.get(key + "/" + turn)));
            }
            // The unit sum of the turn's own vector and of the turn embedded after the one before.
            float[] own = conversation.vectors().get(at);
            float[] pair = withPrevious.get(key + "/" + turn);
            ((ObjectNode) row).put("ctx", Embedder.dot(q1, unit(sum(own, pair))));
            ((ObjectNode) row)
                .put(
                    "sess",
                    bySession.computeIfAbsent(
                        conversation.session()[at],
                        s -> centroidSimilarity(q1, conversation, s, encoded)));
            String said = conversation.turns().turns().get(at).text();
            long named = names.stream()
                .filter(name -> java.util.regex.Pattern.compile(
                        "\\b" + java.util.regex.Pattern.quote(name) + "\\b")
                    .matcher(said)
                    .find())
                .count();
            ((ObjectNode) row).put("ent", names.isEmpty() ? 0 : named / (double) names.size());
            ((ObjectNode) row).put("cov", coverage(weights, conversation.terms().get(at)));
          }
          questions++;
        }
        writer.write(line.has("rows") ? Json.write(line) : text);
        writer.newLine();
      }
    }
    System.out.printf(
        "%d questions, %d memories embedded by the second model, %.0f s%n",
        questions, secondVectors.size(), (System.nanoTime() - started) / 1e9);
    DevelopmentSets.Conversation sample =
        conversations.values().iterator().next().turns();
    cost(
        new dev.langchain4j.model.embedding.onnx.allminilml6v2q
            .AllMiniLmL6V2QuantizedEmbeddingModel(),
        "shipped",
        "",
        "",
        sample);
    if (second != null) {
      cost(second, "second", queryPrefix, passagePrefix, sample);
    }
  }

  private static float[] sum(float[] a, float[] b) {
    float[] s = new float[a.length];
    for (int i = 0; i < a.length; i++) {
      s[i] = a[i] + b[i];
    }
    return s;
  }

  /**
   * What one model costs a question and a memory: the conversation's first 50 questions and turns
   * embedded one a call, four rounds, the last three's mean (both models through langchain4j, so
   * with the same runtime settings).
   */
  private static void cost(
      EmbeddingModel model,
      String name,
      String queryPrefix,
      String passagePrefix,
      DevelopmentSets.Conversation sample) {
    List<String> asked =
        sample.questions().stream().limit(50).map(q -> queryPrefix + q.text()).toList();
    List<String> said =
        sample.turns().stream().limit(50).map(t -> passagePrefix + indexed(t)).toList();
    double[] ms = new double[2];
    for (int round = 0; round < 4; round++) {
      int slot = 0;
      for (List<String> texts : List.of(asked, said)) {
        long started = System.nanoTime();
        texts.forEach(model::embed);
        if (round > 0) {
          ms[slot] += (System.nanoTime() - started) / 1e6 / texts.size() / 3;
        }
        slot++;
      }
    }
    System.out.printf("%s model: %.2f ms a question, %.2f ms a memory%n", name, ms[0], ms[1]);
  }

  private static Conversation read(DevelopmentSets.Conversation c, Embedder shipped) {
    List<DevelopmentSets.Turn> turns = c.turns();
    Map<String, Integer> position = new HashMap<>();
    List<String> texts = new ArrayList<>();
    int[] session = new int[turns.size()];
    for (int i = 0; i < turns.size(); i++) {
      position.put(turns.get(i).id(), i);
      texts.add(indexed(turns.get(i)));
      if (i > 0) {
        boolean apart = turns.get(i).time() == null
            || turns.get(i - 1).time() == null
            || Duration.between(turns.get(i - 1).time(), turns.get(i).time())
                    .abs()
                    .compareTo(SESSION_GAP)
                > 0;
        session[i] = session[i - 1] + (apart ? 1 : 0);
      }
    }
    List<float[]> vectors = new ArrayList<>();
    for (int from = 0; from < texts.size(); from += 32) {
      vectors.addAll(shipped.embedAll(texts.subList(from, Math.min(texts.size(), from + 32))));
    }
    List<Set<String>> terms = new ArrayList<>();
    Map<String, Integer> documentFrequency = new HashMap<>();
    for (String text : texts) {
      Set<String> own = MemoryText.terms(text);
      own.forEach(term -> documentFrequency.merge(term, 1, Integer::sum));
      terms.add(own);
    }
    return new Conversation(c, position, vectors, session, terms, documentFrequency);
  }

  /** The question's terms as the index analyzes them, each weighed by its IDF in the conversation. */
  private static Map<String, Double> idf(String question, Conversation conversation) {
    int documents = conversation.terms().size();
    Map<String, Double> weights = new HashMap<>();
    for (String term : MemoryText.terms(question)) {
      int df = conversation.documentFrequency().getOrDefault(term, 0);
      weights.put(term, Math.log(1 + (documents - df + 0.5) / (df + 0.5)));
    }
    return weights;
  }

  /**
   * The share of the question's IDF weight that the memory's terms match: absolute, unlike BM25
   * over the best BM25 among the candidates (a lone match of one word is 1 there).
   */
  private static double coverage(Map<String, Double> weights, Set<String> memory) {
    double all = 0;
    double matched = 0;
    for (Map.Entry<String, Double> weight : weights.entrySet()) {
      all += weight.getValue();
      if (memory.contains(weight.getKey())) {
        matched += weight.getValue();
      }
    }
    return all == 0 ? 0 : matched / all;
  }

  /** The line's pooled turns that have no vector in {@code vectors} yet, each once. */
  private static List<String> missing(String key, JsonNode line, Map<String, float[]> vectors) {
    List<String> missing = new ArrayList<>();
    for (JsonNode row : line.get("rows")) {
      String turn = row.get("turn").asText();
      if (!vectors.containsKey(key + "/" + turn) && !missing.contains(turn)) {
        missing.add(turn);
      }
    }
    return missing;
  }

  /**
   * Vectors of the line's pooled turns not embedded yet, 16 a call: {@code text} says what is
   * embedded for the turn at a position, {@code model} embeds a batch into unit vectors.
   */
  private static void embedMissing(
      String key,
      Conversation conversation,
      JsonNode line,
      Map<String, float[]> vectors,
      IntFunction<String> text,
      Function<List<String>, List<float[]>> model) {
    List<String> missing = missing(key, line, vectors);
    for (int from = 0; from < missing.size(); from += 16) {
      List<String> batch = missing.subList(from, Math.min(missing.size(), from + 16));
      List<float[]> embedded = model.apply(batch.stream()
          .map(turn -> text.apply(conversation.position().get(turn)))
          .toList());
      for (int i = 0; i < batch.size(); i++) {
        vectors.put(key + "/" + batch.get(i), embedded.get(i));
      }
    }
  }

  /** The question's similarity to the unit centroid of the session's encoded turns. */
  private static double centroidSimilarity(
      float[] question, Conversation conversation, int session, int encoded) {
    List<float[]> vectors = conversation.vectors();
    float[] sum = new float[vectors.getFirst().length];
    for (int i = 0; i < Math.min(encoded, vectors.size()); i++) {
      if (conversation.session()[i] == session) {
        for (int d = 0; d < sum.length; d++) {
          sum[d] += vectors.get(i)[d];
        }
      }
    }
    float[] centroid = unit(sum);
    return Embedder.dot(question, centroid);
  }

  /** The question's names other than the conversation's speakers. */
  private static List<String> names(String question, DevelopmentSets.Conversation conversation) {
    Set<String> speakers = new HashSet<>();
    for (DevelopmentSets.Turn turn : conversation.turns()) {
      for (String part : turn.speaker().split("\\s+")) {
        speakers.add(part.toLowerCase(java.util.Locale.ROOT));
      }
    }
    List<String> names = new ArrayList<>();
    java.util.regex.Matcher found = NAME.matcher(question);
    while (found.find()) {
      String word = found.group(1);
      if (!word.equals("I") && !speakers.contains(word.toLowerCase(java.util.Locale.ROOT))) {
        names.add(word);
      }
    }
    return names;
  }

  /** As the server embeds a memory: its subject (the speaker), then its text. */
  private static String indexed(DevelopmentSets.Turn turn) {
    return MemoryRecord.indexedText(turn.speaker().isBlank() ? null : turn.speaker(), turn.text());
  }

  private static float[] unit(float[] v) {
    double sum = 0;
    for (float x : v) {
      sum += x * x;
    }
    float norm = sum == 0 ? 1 : (float) Math.sqrt(sum);
    float[] u = new float[v.length];
    for (int i = 0; i < v.length; i++) {
      u[i] = v[i] / norm;
    }
    return u;
  }
}
