package io.engram.inference.routing;

import io.engram.inference.models.ModelCard;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.remote.AnthropicEngine;
import io.engram.inference.remote.GeminiEngine;
import io.engram.inference.remote.ProviderEngine;
import io.engram.inference.remote.RemoteEngine;
import io.engram.platform.cluster.NodeBus;
import io.engram.platform.httpclient.OriginClient;
import io.engram.platform.net.Egress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routed models each organization sees: the server's (unless it hid them) and its own, each
 * with the engine that routes its requests across its deployments. Built from the store once per
 * scope and kept; a change drops the scope's build here at once, on the other nodes through the
 * node bus and, should that message be lost, on their next poll of the scopes' versions.
 */
public final class Router implements ModelCatalog.OrganizationModels, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Router.class);
  private static final String CHANNEL = "engram:routing:changes";
  /** Clocks of the nodes may differ by this much; a poll looks back that far. */
  private static final long SKEW_MILLIS = 5_000;

  private final RoutingStore store;
  private final Cooldowns cooldowns;
  private final RoutingMetrics metrics;
  private final Egress egress;
  private final Duration defaultTimeout;
  private final NodeBus bus;
  private final Configured configured;
  private final Map<String, Built> scopes = new ConcurrentHashMap<>();
  private final Map<String, Map<String, ModelCatalog.Entry>> visible = new ConcurrentHashMap<>();
  private final Map<String, Long> versions = new ConcurrentHashMap<>();
  private volatile long polledSince;
  private volatile ProviderAlerts alerts = ProviderAlerts.NONE;

  /** The server's provider and model set by ENGRAM_UPSTREAM_* (kept out of the store). */
  public record Configured(List<Provider> providers, List<RoutedModel> models) {
    public static final Configured NONE = new Configured(List.of(), List.of());
  }

  /** One scope's providers and models, with the engines and clients built for them. */
  private record Built(
      List<Provider> providers,
      List<RoutedModel> models,
      Map<String, RoutedEngine> engines,
      Set<String> hidden,
      List<OriginClient> clients) {}

  Router(
      RoutingStore store,
      Cooldowns cooldowns,
      RoutingMetrics metrics,
      Egress egress,
      Duration defaultTimeout,
      NodeBus bus,
      Configured configured,
      long now) {
    this.store = store;
    this.cooldowns = cooldowns;
    this.metrics = metrics;
    this.egress = egress;
    this.defaultTimeout = defaultTimeout;
    this.bus = bus;
    this.configured = configured;
    this.polledSince = now;
    bus.subscribe(CHANNEL, this::forget);
  }

  Configured configured() {
    return configured;
  }

  /** Where misconfigured providers are reported from now on (models built since). */
  void alertThrough(ProviderAlerts providerAlerts) {
    this.alerts = providerAlerts;
    for (String scope : List.copyOf(scopes.keySet())) {
      forget(scope);
    }
  }

  List<Provider> providers(String scope) {
    return built(scope).providers();
  }

  List<RoutedModel> models(String scope) {
    return built(scope).models();
  }

  Set<String> hidden(String orgId) {
    return built(orgId).hidden();
  }

  /** Drops what this node built for the scope, here and on every node. */
  void changed(String scope) {
    forget(scope);
    bus.publish(CHANNEL, scope);
  }

  private void forget(String scope) {
    Built gone = scopes.remove(scope);
    if (RoutingStore.SERVER.equals(scope)) {
      visible.clear();
    } else {
      visible.remove(scope);
    }
    if (gone != null) {
      // Idle connections close now; one still answering finishes, then closes.
      gone.clients().forEach(OriginClient::close);
    }
  }

  /** Drops the builds of scopes another node changed (the bus's message may have been lost). */
  public void followChanges(long now) {
    Map<String, Long> changed = store.changedSince(polledSince - SKEW_MILLIS);
    polledSince = now;
    changed.forEach((scope, version) -> {
      Long known = versions.put(scope, version);
      if (known == null || !known.equals(version)) {
        forget(scope);
      }
    });
  }

  private Built built(String scope) {
    return scopes.computeIfAbsent(scope, this::build);
  }

  private Built build(String scope) {
    boolean server = RoutingStore.SERVER.equals(scope);
    List<Provider> providers = new ArrayList<>(server ? configured.providers() : List.of());
    providers.addAll(store.providers(scope));
    List<RoutedModel> models = new ArrayList<>(server ? configured.models() : List.of());
    models.addAll(store.models(scope));
    Map<String, Provider> byId = new HashMap<>();
    providers.forEach(p -> byId.put(p.id(), p));
    Map<String, OriginClient> clients = new LinkedHashMap<>();
    Map<String, RoutedEngine> engines = new HashMap<>();
    for (RoutedModel model : models) {
      TreeMap<Integer, List<Target>> groups = new TreeMap<>();
      for (RoutedModel.Deployment d : model.deployments()) {
        Provider provider = byId.get(d.providerId());
        if (provider == null) {
          continue; // refused when stored; a provider deleted since cannot be (see the routes)
        }
        groups
            .computeIfAbsent(d.priority(), p -> new ArrayList<>())
            .add(target(
                d,
                provider,
                clients.computeIfAbsent(
                    provider.id(), id -> endpoint(provider).client(timeout(provider)))));
      }
      engines.put(
          model.model(),
          new RoutedEngine(
              model,
              List.copyOf(groups.values()),
              cooldowns,
              metrics,
              egress,
              defaultTimeout,
              alerts));
    }
    Set<String> hidden = server ? Set.of() : store.hidden(scope);
    return new Built(
        List.copyOf(providers),
        List.copyOf(models),
        Map.copyOf(engines),
        hidden,
        List.copyOf(clients.values()));
  }

  private Target target(RoutedModel.Deployment d, Provider provider, OriginClient client) {
    ProviderEngine engine = engine(provider, d.model(), timeout(provider), client);
    return new Target(
        d.id(),
        provider.name(),
        engine,
        provider.baseUrl(),
        d.weight(),
        d.priority(),
        provider.timeoutSeconds() == null ? null : Duration.ofSeconds(provider.timeoutSeconds()));
  }

  private Duration timeout(Provider provider) {
    return provider.timeoutSeconds() == null
        ? defaultTimeout
        : Duration.ofSeconds(provider.timeoutSeconds());
  }

  /** The engine that speaks the provider's API for one of its models. */
  static ProviderEngine engine(
      Provider provider, String model, Duration timeout, OriginClient client) {
    ProviderEngine.Endpoint endpoint = endpoint(provider);
    return switch (provider.kind()) {
      case OPENAI, AZURE_OPENAI -> new RemoteEngine(endpoint, model, timeout, client);
      case ANTHROPIC -> new AnthropicEngine(endpoint, model, timeout, client);
      case GEMINI -> new GeminiEngine(endpoint, model, timeout, client);
    };
  }

  static ProviderEngine.Endpoint endpoint(Provider provider) {
    return new ProviderEngine.Endpoint(
        provider.baseUrl(),
        provider.apiKey(),
        provider.headers(),
        provider.kind() == ProviderKind.AZURE_OPENAI ? provider.apiVersion() : null,
        provider.replyLimitField());
  }

  /** The organization's models by id: the server's it did not hide, then its own (they win). */
  private Map<String, ModelCatalog.Entry> visible(String orgId) {
    String scope = RoutingStore.scope(orgId);
    return visible.computeIfAbsent(scope, s -> {
      Map<String, ModelCatalog.Entry> entries = new LinkedHashMap<>();
      Built server = built(RoutingStore.SERVER);
      Built own = s.equals(RoutingStore.SERVER) ? null : built(s);
      for (RoutedModel model : server.models()) {
        if (own == null || !own.hidden().contains(model.model())) {
          entries.put(model.model(), entry(model, server.engines().get(model.model()), "engram"));
        }
      }
      if (own != null) {
        for (RoutedModel model : own.models()) {
          entries.put(model.model(), entry(model, own.engines().get(model.model()), s));
        }
      }
      return Map.copyOf(entries);
    });
  }

  private static ModelCatalog.Entry entry(RoutedModel model, RoutedEngine engine, String owner) {
    return new ModelCatalog.Entry(
        new ModelCard(model.model(), model.createdAt() / 1000, owner, model.contextLength(), null),
        engine,
        engine.firstDeploymentModel(),
        new ModelCatalog.Pricing(model.inputPrice(), model.outputPrice()));
  }

  /** A chat model of the organization (the chat routes' lookup: no database on a warm path). */
  @Override
  public Optional<ModelCatalog.Entry> loaded(String orgId, String id) {
    ModelCatalog.Entry entry = visible(orgId).get(id);
    return entry != null && isChat(entry) ? Optional.of(entry) : Optional.empty();
  }

  @Override
  public Optional<ModelCatalog.Entry> find(String orgId, String id) {
    return loaded(orgId, id);
  }

  /** An embedding model of the organization (its engine {@link io.engram.inference.engine.Embeds}). */
  public Optional<ModelCatalog.Entry> embedding(String orgId, String id) {
    ModelCatalog.Entry entry = visible(orgId).get(id);
    return entry != null && !isChat(entry) ? Optional.of(entry) : Optional.empty();
  }

  private static boolean isChat(ModelCatalog.Entry entry) {
    return ((RoutedEngine) entry.engine()).model().type() == RoutedModel.Type.CHAT;
  }

  @Override
  public List<ModelCatalog.Entry> all(String orgId) {
    List<ModelCatalog.Entry> all = new ArrayList<>(visible(orgId).values());
    all.sort(Comparator.comparing(e -> e.card().id()));
    return all;
  }

  @Override
  public void close() {
    for (String scope : List.copyOf(scopes.keySet())) {
      forget(scope);
    }
    LOG.debug("routing: closed");
  }
}
