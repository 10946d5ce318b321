package io.engram.inference.routing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.Ids;
import io.engram.platform.VisibleText;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Managing providers and routed models: each body checked whole (a clear 400 naming the field),
 * each change stored in one transaction and then in force on every node. A provider a model
 * routes to cannot be deleted (409); a model routes only to providers of its own scope, so an
 * organization never spends the server's provider keys on models the operator did not offer.
 */
public final class Routing {
  static final int MAX_NAME = 64;
  static final int MAX_MODEL_ID = 256;
  static final int MAX_HEADERS = 32;
  static final int MAX_DEPLOYMENTS = 50;
  static final int MAX_RETRIES = 5;
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");
  private static final Pattern HEADER = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");
  /** Headers the gateway itself sets on every call. */
  private static final Set<String> RESERVED_HEADERS =
      Set.of("host", "content-length", "transfer-encoding", "connection", "content-type");

  private static final Set<String> PROVIDER_FIELDS = Set.of(
      "name",
      "kind",
      "base_url",
      "api_key",
      "headers",
      "api_version",
      "timeout_seconds",
      "reply_limit_field");
  private static final Set<String> MODEL_FIELDS = Set.of(
      "id",
      "type",
      "context_length",
      "capabilities",
      "pricing",
      "strategy",
      "retries",
      "deployments",
      "hidden");

  private final RoutingStore store;
  private final Router router;
  private final ProviderCheck check;
  private final Clock clock;

  /**
   * The routing of a gateway: its store, the router (with the providers and model ENGRAM_UPSTREAM_*
   * configured), cooldowns told across nodes over {@code bus}, metrics in {@code registry}.
   */
  public static Routing open(
      io.engram.store.Database database,
      io.engram.platform.crypto.SecretBox secrets,
      io.micrometer.core.instrument.MeterRegistry registry,
      io.engram.platform.net.Egress egress,
      io.engram.platform.cluster.NodeBus bus,
      java.time.Duration defaultTimeout,
      Router.Configured configured,
      Clock clock) {
    RoutingStore store = new RoutingStore(database, secrets);
    RoutingMetrics metrics = new RoutingMetrics(registry);
    Cooldowns cooldowns = new Cooldowns(clock, bus, metrics::cooled);
    Router router = new Router(
        store, cooldowns, metrics, egress, defaultTimeout, bus, configured, clock.millis());
    return new Routing(store, router, new ProviderCheck(egress), clock);
  }

  /** The server's provider and model ENGRAM_UPSTREAM_* set: kept as configured, not stored. */
  public static Router.Configured configured(
      URI baseUrl,
      String apiKey,
      String upstreamModel,
      String modelId,
      int contextLength,
      long at) {
    Provider provider = new Provider(
        CONFIGURED,
        null,
        CONFIGURED,
        ProviderKind.OPENAI,
        baseUrl,
        apiKey == null || apiKey.isEmpty() ? null : apiKey,
        Map.of(),
        null,
        null,
        Provider.MAX_TOKENS,
        at,
        at);
    RoutedModel model = new RoutedModel(
        CONFIGURED,
        null,
        modelId,
        RoutedModel.Type.CHAT,
        contextLength,
        new RoutedModel.Capabilities(true, true, true),
        null,
        null,
        RoutedModel.Strategy.WEIGHTED,
        0,
        List.of(new RoutedModel.Deployment(
            CONFIGURED, CONFIGURED, upstreamModel.isEmpty() ? modelId : upstreamModel, 1, 0)),
        at,
        at);
    return new Router.Configured(List.of(provider), List.of(model));
  }

  /** The id of the provider, model and deployment ENGRAM_UPSTREAM_* configured. */
  public static final String CONFIGURED = "upstream";

  Routing(RoutingStore store, Router router, ProviderCheck check, Clock clock) {
    this.store = store;
    this.router = router;
    this.check = check;
    this.clock = clock;
  }

  public Router router() {
    return router;
  }

  /** Reports providers that refuse the gateway's key or model through {@code alerts}. */
  public void alertThrough(ProviderAlerts alerts) {
    router.alertThrough(alerts);
  }

  /** Catches up with changes other nodes made (every second: the bus's message may be lost). */
  public void followChanges() {
    router.followChanges(clock.millis());
  }

  List<Provider> providers(String scope) {
    return router.providers(scope);
  }

  Provider provider(String scope, String id) {
    return router.providers(scope).stream()
        .filter(p -> p.id().equals(id))
        .findFirst()
        .orElseThrow(() -> ApiException.notFound(
            "provider_not_found", "provider_id", "No provider '" + id + "' here"));
  }

  Provider createProvider(String scope, JsonBody body) {
    body.allowOnly(PROVIDER_FIELDS);
    long now = clock.millis();
    Provider provider = provider(Ids.newId("prov", now), scope, body, body, null, now, now);
    requireUniqueName(scope, provider.name(), null);
    store.save(provider, true);
    router.changed(scope);
    return provider;
  }

  Provider updateProvider(String scope, String id, JsonBody body) {
    body.allowOnly(PROVIDER_FIELDS);
    Provider current = stored(provider(scope, id));
    ObjectNode merged = current.view();
    body.node().properties().forEach(f -> merged.set(f.getKey(), f.getValue()));
    Provider updated = provider(
        id, scope, JsonBody.received(merged), body, current, current.createdAt(), clock.millis());
    requireUniqueName(scope, updated.name(), id);
    store.save(updated, false);
    router.changed(scope);
    return updated;
  }

  void deleteProvider(String scope, String id) {
    Provider provider = stored(provider(scope, id));
    for (RoutedModel model : router.models(scope)) {
      if (model.deployments().stream().anyMatch(d -> d.providerId().equals(provider.id()))) {
        throw ApiException.conflict(
            "provider_in_use",
            "provider_id",
            "The model '" + model.model() + "' routes to this provider; change or delete it first");
      }
    }
    store.deleteProvider(scope, id, clock.millis());
    router.changed(scope);
  }

  ObjectNode check(String scope, String id) {
    return check.check(provider(scope, id));
  }

  /** The scope's models; an organization's list also shows the server's, hidden or not. */
  List<ObjectNode> modelViews(String scope) {
    List<ObjectNode> views = new ArrayList<>();
    if (!scope.equals(RoutingStore.SERVER)) {
      Set<String> hidden = router.hidden(scope);
      for (RoutedModel model : router.models(RoutingStore.SERVER)) {
        views.add(serverModelSeenBy(model, hidden));
      }
    }
    router.models(scope).forEach(m -> views.add(m.view()));
    return views;
  }

  /** The scope's own model of that id, else the server's one it sees. */
  ObjectNode modelView(String scope, String modelId) {
    List<ObjectNode> views = modelViews(scope).stream()
        .filter(v -> v.path("id").asText().equals(modelId))
        .toList();
    return views.stream()
        .filter(v -> owns(scope, v))
        .findFirst()
        .or(() -> views.stream().findFirst())
        .orElseThrow(() -> notFound(modelId));
  }

  private static boolean owns(String scope, ObjectNode view) {
    return scope.equals(RoutingStore.SERVER)
        || view.path("owned_by").asText().equals("organization");
  }

  private static ObjectNode serverModelSeenBy(RoutedModel model, Set<String> hidden) {
    return model.view().put("hidden", hidden.contains(model.model()));
  }

  RoutedModel createModel(String scope, JsonBody body) {
    body.allowOnly(MODEL_FIELDS);
    if (body.has("hidden")) {
      throw ApiException.badRequest("hidden", "'hidden' applies to the server's models only");
    }
    long now = clock.millis();
    RoutedModel model = model(Ids.newId("mdl", now), scope, body, List.of(), now, now);
    if (router.models(scope).stream().anyMatch(m -> m.model().equals(model.model()))) {
      throw ApiException.conflict(
          "model_exists", "id", "A model '" + model.model() + "' exists here; PATCH it instead");
    }
    store.save(model, true);
    router.changed(scope);
    return model;
  }

  /**
   * Changes one of the scope's models; for an organization, a server model takes only {@code
   * hidden} (the organization stops or starts seeing it).
   */
  ObjectNode updateModel(String scope, String modelId, JsonBody body) {
    body.allowOnly(MODEL_FIELDS);
    RoutedModel own = router.models(scope).stream()
        .filter(m -> m.model().equals(modelId))
        .findFirst()
        .orElse(null);
    if (own == null) {
      RoutedModel servers = scope.equals(RoutingStore.SERVER)
          ? null
          : router.models(RoutingStore.SERVER).stream()
              .filter(m -> m.model().equals(modelId))
              .findFirst()
              .orElse(null);
      if (servers == null) {
        throw notFound(modelId);
      }
      body.allowOnly(Set.of("hidden"));
      boolean hidden = body.optionalBoolean("hidden")
          .orElseThrow(() -> ApiException.badRequest("hidden", "'hidden' is required"));
      store.hide(scope, modelId, hidden, clock.millis());
      router.changed(scope);
      return serverModelSeenBy(servers, hidden ? Set.of(modelId) : Set.of());
    }
    if (body.has("hidden")) {
      throw ApiException.badRequest("hidden", "'hidden' applies to the server's models only");
    }
    stored(own);
    ObjectNode merged = own.view();
    body.node().properties().forEach(f -> merged.set(f.getKey(), f.getValue()));
    merged.remove(List.of("object", "route_id", "owned_by", "created_at", "updated_at"));
    RoutedModel updated = model(
        own.id(),
        scope,
        JsonBody.received(merged),
        own.deployments(),
        own.createdAt(),
        clock.millis());
    if (!updated.model().equals(own.model())
        && router.models(scope).stream().anyMatch(m -> m.model().equals(updated.model()))) {
      throw ApiException.conflict(
          "model_exists", "id", "A model '" + updated.model() + "' exists here");
    }
    store.save(updated, false);
    router.changed(scope);
    return updated.view();
  }

  void deleteModel(String scope, String modelId) {
    RoutedModel model = router.models(scope).stream()
        .filter(m -> m.model().equals(modelId))
        .findFirst()
        .orElseThrow(() -> notFound(modelId));
    stored(model);
    store.deleteModel(scope, model.id(), clock.millis());
    router.changed(scope);
  }

  /** What ENGRAM_UPSTREAM_* configured is the environment's: changed there, not here. */
  private <T> T stored(T item) {
    boolean configured = router.configured().providers().contains(item)
        || router.configured().models().contains(item);
    if (configured) {
      throw ApiException.conflict(
          "configured_by_environment",
          "This was configured by the ENGRAM_UPSTREAM_* environment variables; change it there");
    }
    return item;
  }

  private void requireUniqueName(String scope, String name, String except) {
    if (router.providers(scope).stream()
        .anyMatch(p -> p.name().equals(name) && !p.id().equals(except))) {
      throw ApiException.conflict(
          "provider_exists", "name", "A provider named '" + name + "' exists here");
    }
  }

  private static ApiException notFound(String modelId) {
    return ApiException.notFound(
        "model_not_found", "model_id", "No model '" + modelId + "' is configured here");
  }

  /**
   * A provider from {@code body} (for a change: the current view with the change laid over it);
   * the key and the headers, which the view does not hold, come from {@code change} when it sets
   * them, else from {@code current}.
   */
  private static Provider provider(
      String id,
      String scope,
      JsonBody body,
      JsonBody change,
      Provider current,
      long created,
      long updated) {
    String name = body.requiredString("name", MAX_NAME);
    if (!NAME.matcher(name).matches()) {
      throw ApiException.badRequest(
          "name",
          "'name' takes letters, digits, '.', '_' and '-', starting with a letter or digit");
    }
    String kindName = body.requiredString("kind", 32);
    ProviderKind kind = ProviderKind.of(kindName)
        .orElseThrow(() -> ApiException.badRequest(
            "kind", "'kind' must be one of " + ProviderKind.names() + ", got '" + kindName + "'"));
    URI baseUrl = baseUrl(body.requiredString("base_url", 2048));
    String apiKey = change.node().has("api_key") || current == null
        ? change.optionalString("api_key", 4096).orElse(null)
        : current.apiKey();
    Map<String, String> headers = change.node().has("headers") || current == null
        ? (change.has("headers") ? headers(change.get("headers")) : Map.of())
        : current.headers();
    String version = body.optionalString("api_version", 64).orElse(null);
    if (kind == ProviderKind.AZURE_OPENAI && version == null) {
      throw ApiException.badRequest(
          "api_version", "An azure_openai provider needs 'api_version' (such as 2024-10-21)");
    }
    Integer timeout = body.optionalInt("timeout_seconds", 1, 600).orElse(null);
    String limitField = body.optionalString("reply_limit_field", 32).orElse(Provider.MAX_TOKENS);
    if (!limitField.equals(Provider.MAX_TOKENS)
        && !limitField.equals(Provider.MAX_COMPLETION_TOKENS)) {
      throw ApiException.badRequest(
          "reply_limit_field", "'reply_limit_field' must be max_tokens or max_completion_tokens");
    }
    return new Provider(
        id,
        scope.equals(RoutingStore.SERVER) ? null : scope,
        name,
        kind,
        baseUrl,
        apiKey,
        headers,
        kind == ProviderKind.AZURE_OPENAI ? version : null,
        timeout,
        limitField,
        created,
        updated);
  }

  private static URI baseUrl(String text) {
    try {
      URI uri = new URI(text);
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase();
      if (!(scheme.equals("http") || scheme.equals("https"))
          || uri.getHost() == null
          || uri.getUserInfo() != null
          || uri.getQuery() != null
          || uri.getFragment() != null) {
        throw new IllegalArgumentException();
      }
      return uri;
    } catch (Exception e) {
      throw ApiException.badRequest(
          "base_url",
          "'base_url' must be an http or https URL with a host and no credentials, query or "
              + "fragment, such as https://api.openai.com/v1");
    }
  }

  private static Map<String, String> headers(JsonNode node) {
    if (!node.isObject() || node.size() > MAX_HEADERS) {
      throw ApiException.badRequest(
          "headers", "'headers' must be an object of at most " + MAX_HEADERS + " names to strings");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (var field : node.properties()) {
      String name = field.getKey();
      JsonNode value = field.getValue();
      if (!HEADER.matcher(name).matches()
          || RESERVED_HEADERS.contains(name.toLowerCase())
          || !value.isTextual()
          || value.asText().length() > 8192
          || value.asText().chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
        throw ApiException.badRequest(
            "headers." + name,
            "Header '" + name + "' must be a valid header name other than Host, Content-Length, "
                + "Content-Type, Transfer-Encoding and Connection, with a string value without "
                + "line breaks");
      }
      headers.put(name, value.asText());
    }
    return headers;
  }

  /** A model's name as clients type and read it: only visible characters (no bidi override). */
  private static String visibleName(String name, String field) {
    if (!VisibleText.isAllVisible(name)) {
      throw ApiException.badRequest(
          field,
          "'" + field + "' may hold only visible characters: no white space, control or format"
              + " characters (such as a zero-width space or a bidirectional override)");
    }
    return name;
  }

  private RoutedModel model(
      String id,
      String scope,
      JsonBody body,
      List<RoutedModel.Deployment> current,
      long created,
      long updated) {
    String modelId = visibleName(body.requiredString("id", MAX_MODEL_ID), "id");
    String typeName = body.optionalString("type", 16).orElse("chat");
    RoutedModel.Type type = switch (typeName) {
      case "chat" -> RoutedModel.Type.CHAT;
      case "embedding" -> RoutedModel.Type.EMBEDDING;
      default -> throw ApiException.badRequest("type", "'type' must be chat or embedding");
    };
    int context = body.optionalInt("context_length", 1, 10_000_000).orElse(8192);
    JsonBody capabilities = JsonBody.received(
        body.optionalObject("capabilities").orElse(Json.MAPPER.createObjectNode()));
    capabilities.allowOnly(Set.of("tools", "json_schema", "vision"));
    JsonBody pricing =
        JsonBody.received(body.optionalObject("pricing").orElse(Json.MAPPER.createObjectNode()));
    pricing.allowOnly(Set.of("input_per_million", "output_per_million"));
    String strategyName = body.optionalString("strategy", 16).orElse("weighted");
    RoutedModel.Strategy strategy = switch (strategyName) {
      case "weighted" -> RoutedModel.Strategy.WEIGHTED;
      case "least_busy" -> RoutedModel.Strategy.LEAST_BUSY;
      default ->
        throw ApiException.badRequest("strategy", "'strategy' must be weighted or least_busy");
    };
    return new RoutedModel(
        id,
        scope.equals(RoutingStore.SERVER) ? null : scope,
        modelId,
        type,
        context,
        new RoutedModel.Capabilities(
            capabilities.optionalBoolean("tools").orElse(true),
            capabilities.optionalBoolean("json_schema").orElse(true),
            // Most models read no image: taking them is declared, not assumed.
            capabilities.optionalBoolean("vision").orElse(false)),
        pricing.optionalNumber("input_per_million", 0, 1_000_000).orElse(null),
        pricing.optionalNumber("output_per_million", 0, 1_000_000).orElse(null),
        strategy,
        body.optionalInt("retries", 0, MAX_RETRIES).orElse(2),
        deployments(scope, type, body.get("deployments"), current, updated),
        created,
        updated);
  }

  /**
   * The deployments as sent. A deployment keeps its id (its cooldowns and metrics) when the body
   * names the id of one the model has; any other gets a new one, so no scope can name another's.
   */
  private List<RoutedModel.Deployment> deployments(
      String scope,
      RoutedModel.Type type,
      JsonNode node,
      List<RoutedModel.Deployment> current,
      long now) {
    if (node == null || !node.isArray() || node.isEmpty() || node.size() > MAX_DEPLOYMENTS) {
      throw ApiException.badRequest(
          "deployments",
          "'deployments' must be an array of 1 to " + MAX_DEPLOYMENTS
              + " {provider_id, model, weight, priority}");
    }
    List<RoutedModel.Deployment> deployments = new ArrayList<>();
    for (int i = 0; i < node.size(); i++) {
      String where = "deployments[" + i + "]";
      if (!(node.get(i) instanceof ObjectNode item)) {
        throw ApiException.badRequest(where, where + " must be an object");
      }
      JsonBody d = JsonBody.received(item);
      d.allowOnly(Set.of("id", "provider_id", "model", "weight", "priority"));
      String providerId = d.requiredString("provider_id", 128);
      if (router.providers(scope).stream().noneMatch(p -> p.id().equals(providerId))) {
        throw ApiException.badRequest(
            where + ".provider_id",
            "No provider '" + providerId + "' here (a model routes to providers of its own "
                + "organization, or, for the server's models, the server's)");
      }
      String named = d.optionalString("id", 64).orElse(null);
      String id = current.stream().anyMatch(c -> c.id().equals(named))
              && deployments.stream().noneMatch(c -> c.id().equals(named))
          ? named
          : Ids.newId("dep", now);
      deployments.add(new RoutedModel.Deployment(
          id,
          providerId,
          visibleName(d.requiredString("model", MAX_MODEL_ID), where + ".model"),
          d.optionalInt("weight", 0, 1000).orElse(1),
          d.optionalInt("priority", 0, 100).orElse(0)));
    }
    if (type == RoutedModel.Type.EMBEDDING) {
      for (RoutedModel.Deployment d : deployments) {
        boolean embeds = router.providers(scope).stream()
            .anyMatch(p -> p.id().equals(d.providerId()) && p.kind() != ProviderKind.ANTHROPIC);
        if (!embeds) {
          throw ApiException.badRequest(
              "deployments",
              "An embedding model's deployments need providers with an embeddings API (openai, "
                  + "azure_openai, gemini); Anthropic's has none");
        }
      }
    }
    if (deployments.stream().noneMatch(d -> d.weight() > 0)) {
      throw ApiException.badRequest(
          "deployments", "At least one deployment needs a weight above 0");
    }
    return deployments;
  }
}
