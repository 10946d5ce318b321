package io.engram.inference;

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
  public record Entry(ModelCard card, Engine engine, String engineModel) {
  }

  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final String defaultModel;

  public ModelCatalog(String defaultModel) {
    this.defaultModel = defaultModel == null || defaultModel.isEmpty() ? null : defaultModel;
  }

  public void add(Entry entry) {
    entries.put(entry.card().id(), entry);
  }

  public Optional<Entry> find(String id) {
    return Optional.ofNullable(entries.get(id));
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
}
