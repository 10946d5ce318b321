package io.engram.inference;

import io.engram.access.Guard;
import io.engram.access.Permission;
import io.engram.access.Principal;
import io.engram.access.Scope;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Model listing and details. A context access token is on the current gateway and sees the one
 * advertised model; an API key is on the extended surface and sees every model, with its
 * parameter-count label.
 */
public final class ModelRoutes implements RouteModule {
  private final Gateway gateway;
  private final Guard guard;
  private final List<ModelCard> extraCards;

  /** @param extraCards models served outside the generation engines (the embedding model) */
  public ModelRoutes(Gateway gateway, Guard guard, List<ModelCard> extraCards) {
    this.gateway = gateway;
    this.guard = guard;
    this.extraCards = List.copyOf(extraCards);
  }

  @Override
  public void register(Routes routes) {
    routes.get("/v1/models", this::list)
        .get("/v1/models/{model_id}", this::show);
  }

  private Principal reader(Context ctx) {
    return guard.anyOf(ctx, Scope.INFERENCE_CHAT, Permission.INFERENCE, Permission.MODELS);
  }

  private void list(Context ctx) {
    boolean extended = reader(ctx).kind() == Principal.Kind.API_KEY;
    List<Map<String, Object>> data = new ArrayList<>();
    for (ModelCard card : visible(extended)) {
      data.add(view(card, extended));
    }
    Responses.json(ctx, Map.of("object", "list", "data", data));
  }

  private void show(Context ctx) {
    boolean extended = reader(ctx).kind() == Principal.Kind.API_KEY;
    String id = ctx.pathParam("model_id");
    ModelCard card = visible(extended).stream().filter(c -> c.id().equals(id)).findFirst()
        .orElseThrow(() -> Gateway.modelNotFound(id));
    Responses.json(ctx, view(card, extended));
  }

  private List<ModelCard> visible(boolean extended) {
    if (!extended) {
      return gateway.catalog().advertised().map(e -> List.of(e.card())).orElse(List.of());
    }
    List<ModelCard> cards = new ArrayList<>(gateway.catalog().all().stream().map(ModelCatalog.Entry::card).toList());
    cards.addAll(extraCards);
    return cards;
  }

  private static Map<String, Object> view(ModelCard card, boolean extended) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", card.id());
    view.put("object", "model");
    view.put("created", card.created());
    view.put("owned_by", card.ownedBy());
    view.put("context_length", card.contextLength());
    if (extended) {
      view.put("parameters", card.parameters());
    }
    return view;
  }
}
