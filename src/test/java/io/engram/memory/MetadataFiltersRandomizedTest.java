package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.junit.jupiter.api.Test;

/**
 * The two faces of a metadata filter agree: what the index finds with {@link
 * MetadataFilters#query()} is exactly what {@link MetadataFilters#matches} accepts, over random
 * metadata (strings, numbers, booleans, times, lists, nested objects, nulls) and random filters.
 * A retrieval filters in the index and rechecks rows with the other, so a disagreement would drop
 * or leak memories.
 */
class MetadataFiltersRandomizedTest {
  private static final String[] KEYS = {"team", "tier", "score", "at", "tags", "owner.region"};
  private static final String[] WORDS = {"sales", "support", "legal", "gold", "5", "true", ""};
  private static final String[] TIMES = {
    "2030-01-01T00:00:00Z",
    "2030-01-15T12:30:00+02:00",
    "2030-02-01T00:00:00.250Z",
    "2029-12-31T23:59:59Z"
  };

  @Test
  void theIndexAndTheRowCheckAcceptTheSameMemories() throws Exception {
    Random random = new Random(4545);
    List<JsonNode> metadata = new ArrayList<>();
    try (ByteBuffersDirectory directory = new ByteBuffersDirectory();
        IndexWriter writer =
            new IndexWriter(directory, new IndexWriterConfig(new StandardAnalyzer()))) {
      for (int i = 0; i < 400; i++) {
        JsonNode m = randomMetadata(random);
        metadata.add(m);
        Document doc = new Document();
        doc.add(new StringField("n", Integer.toString(i), Field.Store.YES));
        MetadataFilters.fields(m).forEach(doc::add);
        writer.addDocument(doc);
      }
      writer.commit();
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        IndexSearcher searcher = new IndexSearcher(reader);
        StoredFields stored = searcher.storedFields();
        int nonEmpty = 0;
        for (int round = 0; round < 600; round++) {
          MetadataFilters filters = MetadataFilters.parse(randomFilters(random));
          Set<Integer> found = new HashSet<>();
          for (ScoreDoc hit : searcher.search(filters.query(), 1_000).scoreDocs) {
            found.add(Integer.parseInt(stored.document(hit.doc).get("n")));
          }
          Set<Integer> accepted = new HashSet<>();
          for (int i = 0; i < metadata.size(); i++) {
            if (filters.matches(metadata.get(i))) {
              accepted.add(i);
            }
          }
          assertThat(found).as("round " + round).isEqualTo(accepted);
          nonEmpty += accepted.isEmpty() ? 0 : 1;
        }
        assertThat(nonEmpty).as("filters that matched something").isGreaterThan(150);
      }
    }
  }

  @Test
  void badFiltersAreRefusedNamingWhere() {
    for (String[] bad : new String[][] {
      {"{\"team\":{\"like\":\"s%\"}}", "filters.team.like"},
      {"{\"team\":{}}", "filters.team"},
      {"{\"team\":[\"a\"]}", "filters.team"},
      {"{\"team\":{\"in\":[]}}", "filters.team.in"},
      {"{\"team\":{\"in\":\"sales\"}}", "filters.team.in"},
      {"{\"score\":{\"gte\":\"high\"}}", "filters.score.gte"},
      {"{\"score\":{\"lt\":true}}", "filters.score.lt"},
      {"{\"bad key\":1}", "filters.bad key"},
      {"{\"a.b.c.d.e\":1}", "filters.a.b.c.d.e"},
      {"[1]", "filters"},
      {"\"team\"", "filters"},
      {"{\"team\":null}", "filters.team"}
    }) {
      assertThatThrownBy(() -> MetadataFilters.parse(Json.read(bad[0], JsonNode.class)))
          .as(bad[0])
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.param()).isEqualTo(bad[1]));
    }
  }

  private static JsonNode randomMetadata(Random random) {
    if (random.nextInt(10) == 0) {
      return null;
    }
    ObjectNode m = Json.MAPPER.createObjectNode();
    for (String key : KEYS) {
      if (random.nextInt(3) == 0) {
        continue;
      }
      ObjectNode parent = m;
      String name = key;
      if (key.contains(".")) {
        parent = m.putObject(key.substring(0, key.indexOf('.')));
        name = key.substring(key.indexOf('.') + 1);
      }
      switch (random.nextInt(7)) {
        case 0 -> parent.put(name, WORDS[random.nextInt(WORDS.length)]);
        case 1 -> parent.put(name, random.nextInt(10) - 3);
        case 2 -> parent.put(name, random.nextInt(100) / 8.0);
        case 3 -> parent.put(name, random.nextBoolean());
        case 4 -> parent.put(name, TIMES[random.nextInt(TIMES.length)]);
        case 5 -> {
          ArrayNode list = parent.putArray(name);
          for (int i = random.nextInt(4); i > 0; i--) {
            if (random.nextBoolean()) {
              list.add(WORDS[random.nextInt(WORDS.length)]);
            } else {
              list.add(random.nextInt(6));
            }
          }
        }
        default -> parent.putNull(name);
      }
    }
    return m;
  }

  private static JsonNode randomFilters(Random random) {
    ObjectNode filters = Json.MAPPER.createObjectNode();
    for (int n = 1 + random.nextInt(2); n > 0; n--) {
      String key = KEYS[random.nextInt(KEYS.length)];
      switch (random.nextInt(6)) {
        case 0 -> filters.put(key, WORDS[random.nextInt(WORDS.length)]);
        case 1 -> filters.put(key, random.nextInt(10) - 3);
        case 2 -> filters.put(key, random.nextBoolean());
        case 3 -> {
          ArrayNode in = filters.putObject(key).putArray("in");
          for (int i = 1 + random.nextInt(3); i > 0; i--) {
            if (random.nextBoolean()) {
              in.add(WORDS[random.nextInt(WORDS.length)]);
            } else {
              in.add(random.nextInt(6));
            }
          }
        }
        case 4 ->
          filters
              .putObject(key)
              .put(
                  new String[] {"gt", "gte", "lt", "lte"}[random.nextInt(4)],
                  random.nextInt(100) / 8.0 - 2);
        default ->
          filters
              .putObject(key)
              .put(
                  new String[] {"gt", "gte", "lt", "lte"}[random.nextInt(4)],
                  TIMES[random.nextInt(TIMES.length)]);
      }
    }
    return filters;
  }
}
