package io.engram.bench;

import io.engram.access.Principal;
import io.engram.memory.ActivationRanker;
import io.engram.memory.AgentScope;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryIndex;
import io.engram.memory.MemoryReads;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemorySearch;
import io.engram.memory.MemoryStores;
import io.engram.memory.RetrievalRequest;
import io.engram.memory.bench.SeedMemories;
import io.engram.memory.lucene.LuceneMemoryIndex;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.Plan;
import io.engram.platform.config.EngramConfig;
import io.engram.store.Database;
import io.engram.store.Databases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The parts of a memory-on chat's retrieval, one at a time, on one thread (issue 21): the query's
 * embedding alone and as one of a batch of 16, the BM25 search, the nearest-neighbour search, the
 * candidates' rows from the database, the ranking, and the whole retrieval as the gateway asks for
 * it. Every call asks a different question (names, topics, companies and a ticket number vary, as
 * bench/chat.lua's VARY does). The organization's memories are seeded once into a temporary data
 * directory by {@link SeedMemories}. Run by {@code bench/jmh.sh MemoryQueryPath}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(
    value = 1,
    jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
public class MemoryQueryPathBenchmark {
  private static final String ORG = "org_bench";
  private static final int QUERIES = 1024;
  private static final int BATCH = 16;
  /** What the gateway asks for: limit 8 gives 50 candidates from each search. */
  private static final int LIMIT = 8;

  private static final int CANDIDATES = 50;

  @Param({"10000"})
  public int memories;

  private Database database;
  private MemoryStores stores;
  private MemoryIndex index;
  private MemoryReads memory;
  private Embedder embedder;
  private Principal caller;
  private MemorySearch.Filter filter;
  private final List<String> queries = new ArrayList<>();
  private final List<float[]> vectors = new ArrayList<>();
  private final List<List<MemorySearch.Hit>> lexicalHits = new ArrayList<>();
  private final List<List<MemorySearch.Hit>> vectorHits = new ArrayList<>();
  private final List<List<MemoryRecord>> rows = new ArrayList<>();
  private int next;

  @Setup
  public void setUp() throws Exception {
    Path dir = Files.createTempDirectory("engram-query-path");
    EngramConfig config = EngramConfig.fromEnvironment(Map.of("ENGRAM_DATA_DIR", dir.toString()));
    Instant now = Instant.now();
    Organization org = new Organization(ORG, "Bench", Plan.SCALE, null, now, now);
    try (Database migrated = Databases.open(config)) {
      new OrganizationStore(migrated).insert(org);
    }
    SeedMemories.main(new String[] {dir.toString(), ORG, String.valueOf(memories)});
    database = Databases.open(config);
    stores = MemoryStores.open(database);
    Clock clock = Clock.systemUTC();
    index = new LuceneMemoryIndex(
        dir.resolve("index").resolve("memory"), stores.memories(), stores.changeLog(), clock);
    embedder = Embedder.shared(dir.resolve("models"));
    memory = new MemoryReads(stores, index, embedder, clock);
    caller = new Principal(
        Principal.Kind.API_KEY, "key_bench", org, Set.of("inference"), List.of(), null, null, null);
    filter = new MemorySearch.Filter(ORG, AgentScope.ORGANIZATION, null, Set.of(), null, null);
    for (int i = 0; i < QUERIES; i++) {
      String query = question(i);
      float[] vector = embedder.embed(query);
      List<MemorySearch.Hit> lexical = index.search().lexical(query, filter, CANDIDATES, true);
      List<MemorySearch.Hit> dense = index.search().vector(vector, filter, CANDIDATES);
      queries.add(query);
      vectors.add(vector);
      lexicalHits.add(lexical);
      vectorHits.add(dense);
      rows.add(List.copyOf(stores.memories().findAll(ORG, ids(lexical, dense)).values()));
    }
  }

  @TearDown
  public void tearDown() throws Exception {
    memory.close();
    database.close();
  }

  /** As bench/chat.lua's VARY=true asks: a name, a topic, a company and a ticket number. */
  static String question(int i) {
    String[] names = {"Dana", "Ana", "Luis", "Mei", "Omar", "Sara", "Ken", "Ivy", "Noah", "Lena"};
    String[] topics = {
      "the enterprise plan", "single sign-on", "the last invoice", "the renewal", "data export",
      "the API limits", "onboarding", "the security review", "the SLA", "audit logs"
    };
    String[] companies = {
      "Acme",
      "Globex",
      "Initech",
      "Umbrella",
      "Hooli",
      "Stark",
      "Wayne",
      "Wonka",
      "Tyrell",
      "Soylent"
    };
    return "What did " + names[i % 10] + " ask about " + topics[i / 10 % 10] + " for "
        + companies[i / 100 % 10] + " (ticket " + (10_000 + i) + ")?";
  }

  private static Set<String> ids(List<MemorySearch.Hit> lexical, List<MemorySearch.Hit> dense) {
    Set<String> ids = new LinkedHashSet<>();
    lexical.forEach(hit -> ids.add(hit.memoryId()));
    dense.forEach(hit -> ids.add(hit.memoryId()));
    return ids;
  }

  private int nextQuery() {
    next = (next + 1) % QUERIES;
    return next;
  }

  @Benchmark
  public float[] embed() {
    return embedder.embed(queries.get(nextQuery()));
  }

  /** Per query, when 16 queries share one call to the model. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public List<float[]> embedBatched() {
    int from = nextQuery() / BATCH * BATCH;
    next = from + BATCH - 1;
    return embedder.embedAll(queries.subList(from, from + BATCH));
  }

  @Benchmark
  public List<MemorySearch.Hit> lexical() {
    return index.search().lexical(queries.get(nextQuery()), filter, CANDIDATES, true);
  }

  @Benchmark
  public List<MemorySearch.Hit> dense() {
    return index.search().vector(vectors.get(nextQuery()), filter, CANDIDATES);
  }

  @Benchmark
  public Map<String, MemoryRecord> load() {
    int i = nextQuery();
    return stores.memories().findAll(ORG, ids(lexicalHits.get(i), vectorHits.get(i)));
  }

  @Benchmark
  public List<ActivationRanker.Ranked> rank() {
    return ranked(nextQuery());
  }

  private List<ActivationRanker.Ranked> ranked(int i) {
    return new ActivationRanker(RetrievalRequest.RankingMode.HYBRID, true)
        .rank(
            queries.get(i),
            rows.get(i),
            lexicalHits.get(i),
            vectorHits.get(i),
            vectors.get(i),
            Instant.now());
  }

  /**
   * Context around the hits: the neighbours in time of the ten best (two a side within 30
   * minutes, as ContextSpread asks for them).
   */
  @Benchmark
  public int neighbours() {
    int i = nextQuery();
    List<ActivationRanker.Ranked> ranked = ranked(i);
    int found = 0;
    for (ActivationRanker.Ranked hit : ranked.subList(0, Math.min(10, ranked.size()))) {
      found += index
          .search()
          .neighbours(filter, MemorySearch.Lender.of(hit.memory()), 2, Duration.ofMinutes(30))
          .size();
    }
    return found;
  }

  /** The whole retrieval as the gateway asks for it (its embedding included). */
  @Benchmark
  public MemoryReads.Retrieval retrieve() {
    RetrievalRequest request =
        RetrievalRequest.forConversation(queries.get(nextQuery()), LIMIT, 2_000);
    return memory.retrieve(caller, AgentScope.ORGANIZATION, request, null);
  }
}
