package io.engram.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.Engram;
import io.engram.access.Authentication;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.RouteModule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** The real service on an ephemeral port, on a temporary SQLite file or a fresh PostgreSQL schema. */
public final class TestServer implements AutoCloseable {
  public static final String ADMIN_KEY = "test-operator-key-0123456789abcdef";

  public final MutableClock clock;
  public final Engram engram;
  public final Http http;
  private final EngramConfig config;
  private final Path dataDir;
  private final String postgresUrl;
  private final boolean ownsDatabase;
  private final boolean ownsDataDir;

  private TestServer(Builder builder) {
    this.ownsDatabase = builder.sharedWith == null;
    this.postgresUrl = builder.sharedWith != null
        ? builder.sharedWith.postgresUrl
        : builder.postgres ? TestDatabases.freshPostgresUrl() : null;
    this.ownsDataDir = builder.dataDir == null;
    try {
      this.dataDir = ownsDataDir ? Files.createTempDirectory("engram-test") : builder.dataDir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.clock = builder.clock;
    Map<String, String> env = new HashMap<>();
    env.put("ENGRAM_DATA_DIR", dataDir.toString());
    env.put("ENGRAM_ADMIN_KEY", ADMIN_KEY);
    env.put("API_HOST", "127.0.0.1");
    env.put("LOG_LEVEL", "warning");
    // Reflection tests drive the schedule themselves; elsewhere a run must not change memories
    // mid-test.
    env.put("ENGRAM_REFLECTION_SCHEDULER", "false");
    if (postgresUrl != null) {
      env.put("DATABASE_URL", postgresUrl);
      // Nodes sharing a database share the key that seals its secrets, as operators must set it.
      env.put("ENGRAM_SECRET_KEY", "7e57".repeat(16));
    }
    // Custom-domain checks ask a DNS server of the tests, never the machine's resolver.
    env.put("ENGRAM_DNS_RESOLVER", DnsResponder.shared().address());
    env.putAll(builder.env);
    // Ephemeral ports are given as overrides (the environment's own check wants a real port).
    Map<String, String> ports = new HashMap<>(Map.of("API_PORT", "0"));
    if ("0".equals(env.get("API_TLS_PORT"))) {
      ports.put("API_TLS_PORT", env.remove("API_TLS_PORT"));
    }
    this.config = EngramConfig.fromEnvironment(env).withOverrides(ports);
    this.engram = Engram.start(config, clock, builder.probes);
    this.http = new Http("http://127.0.0.1:" + engram.port());
  }

  /** The server's data directory (ENGRAM_DATA_DIR). */
  /** The configuration the server runs on (for a command run beside it, such as the admin CLI). */
  public EngramConfig config() {
    return config;
  }

  public Path dataDir() {
    return dataDir;
  }

  /** The JDBC URL of the server's database (its SQLite file, or its PostgreSQL schema). */
  public String jdbcUrl() {
    return postgresUrl != null ? postgresUrl : "jdbc:sqlite:" + dataDir.resolve("engram.db");
  }

  public static Builder builder() {
    return new Builder();
  }

  public static TestServer start() {
    return builder().start();
  }

  /** Options of a test server. */
  public static final class Builder {
    private final Map<String, String> env = new HashMap<>();
    private final List<RouteModule> probes = new ArrayList<>();
    private MutableClock clock = MutableClock.atMinuteStart();
    private boolean postgres;
    private TestServer sharedWith;
    private Path dataDir;

    public Builder env(String name, String value) {
      env.put(name, value);
      return this;
    }

    public Builder postgres() {
      this.postgres = true;
      return this;
    }

    /** Another node on the same PostgreSQL database as {@code node} (its own data directory and index). */
    public Builder sharing(TestServer node) {
      this.sharedWith = node;
      this.clock = node.clock;
      return this;
    }

    /**
     * Runs on {@code dir} (SQLite file, index, files), which outlives the server: a second server
     * on the same directory is the first one restarted.
     */
    public Builder dataDir(Path dir) {
      this.dataDir = dir;
      return this;
    }

    public Builder clock(MutableClock value) {
      this.clock = value;
      return this;
    }

    /** Mounts extra routes behind the real guards, to probe access rules no product route uses yet. */
    public Builder probe(RouteModule module) {
      probes.add(module);
      return this;
    }

    public TestServer start() {
      return new TestServer(this);
    }
  }

  public Http.Response asOperator(Http.Call call) {
    return call.bearer(ADMIN_KEY).send();
  }

  /** The operator's set-up calls, on this server. */
  public Operator operator() {
    return new Operator(http, ADMIN_KEY);
  }

  public String createOrganization(String plan) {
    return operator().createOrganization(plan);
  }

  /** Creates an API key and returns its secret. */
  public String apiKey(String orgId, int rateLimit, String... permissions) {
    return operator().createApiKey(orgId, rateLimit, permissions).get("token").asText();
  }

  /** A context access token with every memory scope and inference:chat, bound to no agent. */
  public String tokenWithEveryScope(String orgId) {
    return token(
        orgId,
        null,
        "memory:read",
        "memory:write",
        "memory:control",
        "memory:delete",
        "inference:chat");
  }

  /** Creates a context access token and returns its secret. */
  public String token(String orgId, List<String> agents, String... scopes) {
    return operator().token(orgId, agents, scopes);
  }

  /** Creates a context access token bound to one end user and returns its secret. */
  public String endUserToken(String orgId, String endUser, String... scopes) {
    return operator().endUserToken(orgId, endUser, scopes);
  }

  public JsonNode createUser(String orgId, String email, String role, String password) {
    String body =
        "{\"email\":\"" + email + "\",\"role\":\"" + role + "\",\"password\":\"" + password + "\"}";
    return created(asOperator(http.post("/v1/organizations/" + orgId + "/users").json(body)));
  }

  /** A signed-in browser: its session cookie and CSRF token, added to every call it makes. */
  public record Session(String cookie, String csrf, JsonNode user) {
    public Http.Call on(Http.Call call) {
      return call.header("Cookie", Authentication.SESSION_COOKIE + "=" + cookie)
          .header(Authentication.CSRF_HEADER, csrf);
    }
  }

  /** Creates a user with the role and signs them in. */
  public Session signedIn(String orgId, String email, String role) {
    String password = "password for " + email;
    JsonNode user = createUser(orgId, email, role, password);
    Http.Response login = http.post("/api/auth/login")
        .json("{\"email\":\"" + email + "\",\"password\":\"" + password + "\"}")
        .send();
    assertThat(login.status()).as(login.text()).isEqualTo(200);
    String cookie = login.headerValues("Set-Cookie").stream()
        .flatMap(header -> java.net.HttpCookie.parse(header).stream())
        .filter(c -> c.getName().equals(Authentication.SESSION_COOKIE))
        .findFirst()
        .orElseThrow()
        .getValue();
    return new Session(cookie, login.json().get("csrfToken").asText(), user);
  }

  /**
   * A value of /metrics: the first series of {@code name} whose labels contain {@code labels}
   * (empty: any series).
   */
  public double metric(String name, String labels) {
    String text = http.get("/metrics").bearer(ADMIN_KEY).send().text();
    java.util.regex.Matcher value = java.util.regex.Pattern.compile("(?m)^"
            + java.util.regex.Pattern.quote(name)
            + (labels.isEmpty()
                ? "(?:\\{[^}]*})?"
                : "\\{[^}]*" + java.util.regex.Pattern.quote(labels) + "[^}]*}")
            + " (\\S+)$")
        .matcher(text);
    assertThat(value.find()).as(name + "{" + labels + "} in /metrics").isTrue();
    return Double.parseDouble(value.group(1));
  }

  /** The in-process engine that serves a model of the server's catalog. */
  public io.engram.inference.local.LocalEngine localEngine(String modelId) {
    return (io.engram.inference.local.LocalEngine)
        engram.inference().gateway().catalog().find(modelId).orElseThrow().engine();
  }

  private static JsonNode created(Http.Response response) {
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json();
  }

  @Override
  public void close() {
    engram.close();
    if (postgresUrl != null && ownsDatabase) {
      TestDatabases.drop(postgresUrl);
    }
    if (!ownsDataDir) {
      return;
    }
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
