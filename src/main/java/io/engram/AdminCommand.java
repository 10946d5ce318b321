package io.engram;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.CredentialKind;
import io.engram.administration.OrganizationRequests;
import io.engram.administration.OrganizationService;
import io.engram.administration.OrganizationViews;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code engram admin ...}: the management routes as commands, run against the configured
 * database. Flags become the same JSON body the route takes, so the CLI validates and answers
 * exactly as HTTP does; {@code --json} prints that answer.
 */
public final class AdminCommand {
  static final String USAGE = """
      Usage: engram <command>
        serve                                   run the service (default)
        demo-model                              write a tiny untrained model into MODEL_CACHE_DIR
                                                for the local engine (no download; output is noise)
        admin org create --name N [--plan P] [--requests-per-minute N]
                                                create an organization (a contract-specific
                                                /api budget needs Growth or above)
        admin org get ORG_ID | admin org list
        admin user create --org ORG_ID --email E [--name N] [--role owner|admin|member] [--password-stdin]
        admin user list --org ORG_ID
        admin token create --org ORG_ID --name N --scope S [--scope S...] [--agent A...] [--expires-at T]
        admin token list --org ORG_ID | admin token revoke --org ORG_ID --id TOKEN_ID
        admin api-key create --org ORG_ID --name N --permission P [--permission P...] [--rate-limit N] [--expires-at T]
        admin api-key list --org ORG_ID | admin api-key revoke --org ORG_ID --id KEY_ID
        admin account-key create --name N [--expires-at T] | list | revoke --id KEY_ID
        admin memory-index reindex              with ENGRAM_MEMORY_INDEX=solr: rebuild the memory
                                                collection from the database beside the current
                                                one, then move the alias to it (retrieval goes on)
      Add --json to print the JSON the HTTP route would answer. Secrets are printed once, at creation.""";

  /** Flags that may repeat; they become JSON arrays under the plural name. */
  private static final Map<String, String> LIST_FLAGS =
      Map.of("scope", "scopes", "agent", "agents", "permission", "permissions");

  private static final Set<String> INTEGER_FLAGS = Set.of("rate-limit", "requests-per-minute");

  private final EngramConfig config;
  private final PrintStream out;
  private final PrintStream err;
  private final InputStream in;

  public AdminCommand(EngramConfig config, PrintStream out, PrintStream err, InputStream in) {
    this.config = config;
    this.out = out;
    this.err = err;
    this.in = in;
  }

  /** Runs the command and returns the exit code: 0 done, 1 refused (the error is printed), 2 usage. */
  public int run(String[] args) {
    if (args.length < 2) {
      err.println(USAGE);
      return 2;
    }
    Parsed parsed;
    try {
      parsed = Parsed.of(args);
    } catch (IllegalArgumentException e) {
      err.println(e.getMessage() + "\n" + USAGE);
      return 2;
    }
    try (Services services = Services.open(config, Clock.systemUTC())) {
      Object result = parsed.resource.equals("memory-index") && parsed.verb.equals("reindex")
          ? io.engram.memory.solr.SolrMemoryIndex.reindex(
              config, services.database(), Clock.systemUTC())
          : dispatch(services.organizationService(), parsed);
      if (result == null) {
        err.println("Unknown admin command '" + args[0] + " " + args[1] + "'.\n" + USAGE);
        return 2;
      }
      print(result, parsed.json);
      return 0;
    } catch (ApiException e) {
      err.println("error: " + e.getMessage() + (e.param() == null ? "" : " (" + e.param() + ")"));
      return 1;
    }
  }

  private Object dispatch(OrganizationService orgs, Parsed p) {
    return switch (p.resource + " " + p.verb) {
      case "org create" ->
        OrganizationViews.organization(orgs.create(OrganizationRequests.organization(p.body())));
      case "org get" -> OrganizationViews.organization(orgs.get(p.positional()));
      case "org list" -> OrganizationViews.organizations(orgs.list(null, 1000));
      case "user create" ->
        OrganizationViews.user(
            orgs.createUser(p.require("org"), OrganizationRequests.user(withPassword(p))));
      case "user list" -> OrganizationViews.users(orgs.users(p.require("org")));
      case "token create" ->
        OrganizationViews.issued(
            orgs.createToken(p.require("org"), OrganizationRequests.token(p.body()), "cli"));
      case "api-key create" ->
        OrganizationViews.issued(
            orgs.createApiKey(p.require("org"), OrganizationRequests.apiKey(p.body()), "cli"));
      case "account-key create" ->
        OrganizationViews.issued(
            orgs.createAccountKey(OrganizationRequests.accountKey(p.body()), "cli"));
      case "token list", "api-key list", "account-key list" -> {
        CredentialKind kind = credentialKind(p.resource);
        yield OrganizationViews.credentials(orgs.credentials(kind, orgOf(kind, p)));
      }
      case "token revoke", "api-key revoke", "account-key revoke" -> {
        CredentialKind kind = credentialKind(p.resource);
        String orgId = orgOf(kind, p);
        yield OrganizationViews.credential(orgs.revoke(kind, orgId, p.require("id")), null);
      }
      default -> null;
    };
  }

  private static CredentialKind credentialKind(String resource) {
    return switch (resource) {
      case "token" -> CredentialKind.CONTEXT_TOKEN;
      case "api-key" -> CredentialKind.API_KEY;
      default -> CredentialKind.ACCOUNT_KEY;
    };
  }

  /** Account keys belong to no organization; the other credentials name theirs with --org. */
  private static String orgOf(CredentialKind kind, Parsed p) {
    return kind == CredentialKind.ACCOUNT_KEY ? null : p.require("org");
  }

  /** Passwords come from stdin (--password-stdin), never from the command line where ps shows them. */
  private JsonBody withPassword(Parsed p) {
    if (p.flags.containsKey("password-stdin")) {
      try {
        String password =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).readLine();
        p.flags.remove("password-stdin");
        p.flags.put("password", password == null ? "" : password);
      } catch (IOException e) {
        throw ApiException.badRequest("password", "could not read the password from stdin");
      }
    }
    return p.body();
  }

  private void print(Object result, boolean json) {
    if (json) {
      out.println(Json.write(result));
      return;
    }
    if (result instanceof Map<?, ?> map && map.get("data") instanceof List<?> items) {
      items.forEach(item -> out.println(summary((Map<?, ?>) item)));
      out.println(items.size() + " item(s)");
      return;
    }
    Map<?, ?> map = (Map<?, ?>) result;
    map.forEach((key, value) -> out.println(
        key + ": " + (value instanceof Map || value instanceof List ? Json.write(value) : value)));
    if (map.containsKey("token")) {
      out.println("\nThe token above is shown only now; store it safely.");
    }
  }

  private static String summary(Map<?, ?> item) {
    List<String> parts = new ArrayList<>();
    for (String key : List.of(
        "id", "name", "email", "role", "plan", "hint", "scopes", "permissions", "revoked")) {
      if (item.containsKey(key)) {
        parts.add(key + "=" + item.get(key));
      }
    }
    return String.join("  ", parts);
  }

  /** The command line split into resource, verb, positional argument and flags. */
  private record Parsed(
      String resource,
      String verb,
      List<String> positionals,
      Map<String, Object> flags,
      boolean json) {

    static Parsed of(String[] args) {
      Map<String, Object> flags = new LinkedHashMap<>();
      List<String> positionals = new ArrayList<>();
      boolean json = false;
      // A flag takes the argument after it as its value, so the walk moves one or two at a time.
      int i = 2;
      while (i < args.length) {
        String arg = args[i++];
        if (arg.equals("--json")) {
          json = true;
        } else if (arg.equals("--password-stdin")) {
          flags.put("password-stdin", true);
        } else if (arg.startsWith("--")) {
          String name = arg.substring(2);
          if (i >= args.length) {
            throw new IllegalArgumentException("Flag " + arg + " needs a value");
          }
          String value = args[i++];
          if (LIST_FLAGS.containsKey(name)) {
            @SuppressWarnings("unchecked")
            List<String> list = (List<String>)
                flags.computeIfAbsent(LIST_FLAGS.get(name), k -> new ArrayList<String>());
            list.add(value);
          } else {
            flags.put(name, value);
          }
        } else {
          positionals.add(arg);
        }
      }
      return new Parsed(args[0], args[1], positionals, flags, json);
    }

    String positional() {
      if (positionals.size() != 1) {
        throw ApiException.badRequest(null, "expected exactly one id argument");
      }
      return positionals.getFirst();
    }

    String require(String flag) {
      Object value = flags.remove(flag);
      if (!(value instanceof String text) || text.isBlank()) {
        throw ApiException.badRequest(flag, "--" + flag + " is required");
      }
      return text;
    }

    /** The remaining flags as the route's JSON body (kebab-case flags become snake_case fields). */
    JsonBody body() {
      ObjectNode node = Json.MAPPER.createObjectNode();
      flags.forEach((name, value) -> {
        String field = name.replace('-', '_');
        if (value instanceof List<?> list) {
          ArrayNode array = node.putArray(field);
          list.forEach(item -> array.add((String) item));
        } else if (INTEGER_FLAGS.contains(name) && ((String) value).matches("-?\\d{1,9}")) {
          node.put(field, Integer.parseInt((String) value));
        } else {
          node.put(field, (String) value);
        }
      });
      return JsonBody.of(node);
    }
  }
}
