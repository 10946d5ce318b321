package io.engram.inference.models;

import io.engram.inference.engine.Engine;
import io.engram.platform.http.ApiException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every model this gateway can serve, by client-facing id, with the engine that serves it. The
 * current gateway advertises one id ({@code DEFAULT_MODEL}); the extended surface lists them all.
 */
public final class ModelCatalog {

  /**
   * A servable model: its card, its engine, the name the engine knows it by, and its prices
   * ({@link Pricing#NONE} when not priced).
   */
  public record Entry(ModelCard card, Engine engine, String engineModel, Pricing pricing) {
    public Entry(ModelCard card, Engine engine, String engineModel) {
      this(card, engine, engineModel, Pricing.NONE);
    }
  }

  /** US dollars per million input (prompt) and output (completion) tokens; null: not priced. */
  public record Pricing(Double inputPerMillion, Double outputPerMillion) {
    public static final Pricing NONE = new Pricing(null, null);

    /** What the tokens cost, in billionths of a dollar (a dollar per million is 1,000 a token). */
    public long costNanos(long promptTokens, long completionTokens) {
      double nanos = (inputPerMillion == null ? 0 : inputPerMillion * 1000 * promptTokens)
          + (outputPerMillion == null ? 0 : outputPerMillion * 1000 * completionTokens);
      return Math.round(nanos);
    }
  }

  /** Models one organization owns (its uploads), seen by that organization only. */
  public interface OrganizationModels {
    OrganizationModels NONE = new OrganizationModels() {
      @Override
      public Optional<Entry> loaded(String orgId, String id) {
        return Optional.empty();
      }

      @Override
      public Optional<Entry> find(String orgId, String id) {
        return Optional.empty();
      }

      @Override
      public List<Entry> all(String orgId) {
        return List.of();
      }
    };

    /** An organization's model already known to this node (no disk access: the hot path). */
    Optional<Entry> loaded(String orgId, String id);

    /** An organization's model, looked for on disk too. */
    Optional<Entry> find(String orgId, String id);

    List<Entry> all(String orgId);

    /** Deletes one of the organization's models; false when this source has none by that id. */
    default boolean delete(String orgId, String id) {
      return false;
    }
  }

  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final String defaultModel;
  private final List<OrganizationModels> organizationModels =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile OrganizationModels routed = OrganizationModels.NONE;
  private volatile java.util.function.BiFunction<String, String, Optional<Entry>> embeddings =
      (orgId, id) -> Optional.empty();

  public ModelCatalog(String defaultModel) {
    this.defaultModel = defaultModel == null || defaultModel.isEmpty() ? null : defaultModel;
  }

  public void add(Entry entry) {
    entries.put(entry.card().id(), entry);
  }

  /**
   * Serves the routed models (the server's and each organization's, over providers): the server's
   * are everyone's, as the configured ones are; an organization's own come before both.
   */
  public void routeThrough(OrganizationModels routedModels) {
    this.routed = routedModels;
  }

  /** Serves the routed embedding models too (looked up by organization and id). */
  public void embedThrough(
      java.util.function.BiFunction<String, String, Optional<Entry>> embeddingModels) {
    this.embeddings = embeddingModels;
  }

  /** A routed embedding model as the organization sees it. */
  public Optional<Entry> routedEmbedding(String orgId, String id) {
    return embeddings.apply(orgId, id);
  }

  /** Every routed model the organization sees (chat and embedding), by id. */
  public List<Entry> routedAll(String orgId) {
    return routed.all(orgId);
  }

  /** A routed model as the organization sees it (null: the server's). */
  public Optional<Entry> routed(String orgId, String id) {
    return routed.loaded(orgId, id);
  }

  /** Adds a source of organizations' own models (uploads, fine-tuned models), searched in order. */
  public void serveOrganizationModels(OrganizationModels models) {
    organizationModels.add(models);
  }

  /** A model every organization sees (configured or the server's routed ones, not uploaded). */
  public Optional<Entry> find(String id) {
    Entry entry = entries.get(id);
    return entry != null ? Optional.of(entry) : routed.loaded(null, id);
  }

  /**
   * A model as one organization sees it: its own upload first, then the instance's. The disk is
   * searched (an upload another node made) only when neither is known, so a request for a
   * configured model costs no file-system call.
   */
  public Optional<Entry> find(String orgId, String id) {
    for (OrganizationModels source : organizationModels) {
      Optional<Entry> loaded = source.loaded(orgId, id);
      if (loaded.isPresent()) {
        return loaded;
      }
    }
    Optional<Entry> routedModel = routed.loaded(orgId, id);
    if (routedModel.isPresent()) {
      return routedModel;
    }
    Optional<Entry> configured = Optional.ofNullable(entries.get(id));
    if (configured.isPresent()) {
      return configured;
    }
    for (OrganizationModels source : organizationModels) {
      Optional<Entry> found = source.find(orgId, id);
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
  }

  /** Deletes one of the organization's own models; false when it has none by that id. */
  public boolean deleteOrganizationModel(String orgId, String id) {
    for (OrganizationModels source : organizationModels) {
      if (source.delete(orgId, id)) {
        return true;
      }
    }
    return false;
  }

  /** The single client-facing model of the current gateway, when it is servable. */
  public Optional<Entry> advertised() {
    if (defaultModel != null) {
      return find(defaultModel);
    }
    List<Entry> all = all();
    return all.size() == 1 ? Optional.of(all.getFirst()) : Optional.empty();
  }

  /** The models every organization sees: configured and the server's routed ones. */
  public List<Entry> all() {
    List<Entry> all = new ArrayList<>(entries.values());
    routed.all(null).stream().filter(e -> !entries.containsKey(e.card().id())).forEach(all::add);
    all.sort(Comparator.comparing(e -> e.card().id()));
    return all;
  }

  /**
   * Every model one organization can use: the configured ones, the routed ones it sees (its own
   * over the server's of the same id), then its own uploads.
   */
  public List<Entry> all(String orgId) {
    java.util.Map<String, Entry> byId = new java.util.LinkedHashMap<>();
    entries.values().forEach(e -> byId.put(e.card().id(), e));
    routed.all(orgId).forEach(e -> byId.put(e.card().id(), e));
    List<Entry> all = new ArrayList<>(byId.values());
    all.sort(Comparator.comparing(e -> e.card().id()));
    organizationModels.forEach(source -> all.addAll(source.all(orgId)));
    return all;
  }

  /** A model the caller cannot use, in OpenAI's words. */
  public static ApiException notFound(String id) {
    return ApiException.notFound(
        "model_not_found",
        "model",
        "The model '" + id + "' does not exist or is not served here; GET /v1/models lists them");
  }
}
