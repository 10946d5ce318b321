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

  /** A servable model: its card, its engine, and the name the engine knows it by. */
  public record Entry(ModelCard card, Engine engine, String engineModel) {}

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

  public ModelCatalog(String defaultModel) {
    this.defaultModel = defaultModel == null || defaultModel.isEmpty() ? null : defaultModel;
  }

  public void add(Entry entry) {
    entries.put(entry.card().id(), entry);
  }

  /** Adds a source of organizations' own models (uploads, fine-tuned models), searched in order. */
  public void serveOrganizationModels(OrganizationModels models) {
    organizationModels.add(models);
  }

  /** A model every organization sees (configured, not uploaded). */
  public Optional<Entry> find(String id) {
    return Optional.ofNullable(entries.get(id));
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
    Optional<Entry> configured = find(id);
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
    return entries.size() == 1 ? entries.values().stream().findFirst() : Optional.empty();
  }

  public List<Entry> all() {
    List<Entry> all = new ArrayList<>(entries.values());
    all.sort(Comparator.comparing(e -> e.card().id()));
    return all;
  }

  /** Every model one organization can use: the instance's, then its own uploads. */
  public List<Entry> all(String orgId) {
    List<Entry> all = all();
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
