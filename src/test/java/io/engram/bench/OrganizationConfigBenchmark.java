package io.engram.bench;

import io.engram.access.Principal;
import io.engram.inference.usage.InferenceLimits;
import io.engram.inference.usage.UsageLedger;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.Plan;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.ConnectionOwners;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import io.engram.settings.SystemDefaults;
import io.engram.store.Database;
import io.engram.store.Databases;
import io.engram.store.SecretKeys;
import java.nio.file.Files;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.ByteArrayEndPoint;
import org.eclipse.jetty.io.Connection;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What an organization's configuration costs each request (issue 18): resolving the configuration
 * in force (a cache hit, no database read), the allowlist check, the connection claim of a request
 * on an open connection, and a concurrency slot taken and given back. Run by bench/jmh.sh.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
public class OrganizationConfigBenchmark {
  private static final byte[] CLIENT = {10, 1, 2, 3};

  private Database db;
  private Organization org;
  private OrganizationConfigs configs;
  private InferenceLimits limits;
  private Principal caller;
  private ConnectionOwners owners;
  private Connection connection;

  @Setup
  public void setUp() throws Exception {
    var dir = Files.createTempDirectory("engram-bench");
    EngramConfig config = EngramConfig.fromEnvironment(Map.of("ENGRAM_DATA_DIR", dir.toString()));
    db = Databases.open(config);
    Clock clock = Clock.systemUTC();
    org = new Organization("org_bench", "Bench", Plan.SEED, null, clock.instant(), clock.instant());
    new OrganizationStore(db).insert(org);
    configs = new OrganizationConfigs(
        db, SystemDefaults.of(config), SecretKeys.open(config.storage(), db), clock);
    configs.update(
        org,
        io.engram.platform.json.Json.read(
            "{\"network\":{\"allowed_ips\":[\"192.0.2.0/24\",\"10.0.0.0/8\"]}}",
            com.fasterxml.jackson.databind.JsonNode.class),
        null,
        null);
    limits = new InferenceLimits(
        UsageLedger.open(db, clock),
        configs,
        new io.engram.platform.ratelimit.SlidingWindowRateLimiter(clock));
    caller = new Principal(
        Principal.Kind.API_KEY, "key_bench", org, Set.of("inference"), List.of(), null, null, null);
    owners = new ConnectionOwners();
    connection = new AbstractConnection(new ByteArrayEndPoint(), Runnable::run) {
      @Override
      public void onFillable() {}
    };
    owners.claim(connection, org.id(), Long.MAX_VALUE);
  }

  @TearDown
  public void tearDown() {
    db.close();
  }

  @Benchmark
  public long effectiveConfig() {
    return configs.effective(org).count(ConfigField.MAX_CONCURRENT_REQUESTS);
  }

  @Benchmark
  public boolean allowlistCheck() {
    return configs.effective(org).allows(CLIENT);
  }

  @Benchmark
  public boolean connectionClaim() {
    EffectiveConfig config = configs.effective(org);
    return owners.claim(connection, org.id(), config.count(ConfigField.MAX_CONNECTIONS));
  }

  @Benchmark
  public void concurrencySlot() {
    try (InferenceLimits.Permit permit = limits.admit(
        caller,
        java.util.Optional.empty(),
        InferenceLimits.TokenDemand.exactly(1, 1.0), // a request has a token at least
        InferenceLimits.Spending.FREE)) {
      // taken and given back, as a request does
    }
  }
}
