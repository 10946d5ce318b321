package io.engram.inference.models;

import io.engram.access.Access;
import io.engram.access.Permission;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.access.Scope;
import io.engram.memory.AgentBoundary;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.RefusedBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * Model listing, details and upload. A context access token is on the current gateway and sees
 * the one advertised model; an API key is on the extended surface and sees every model its
 * organization can use (the instance's and its own uploads), with the parameter-count label.
 */
public final class ModelRoutes implements RouteModule {
  static final String AGENT_MODELS = "/v1/agents/{agentSlug}/models";
  private final ModelCatalog catalog;
  private final List<ModelCard> extraCards;
  private final ModelUploads uploads;
  private final Function<Organization, OptionalInt> maxModelSizeGb;

  /**
   * @param extraCards     models served outside the generation engines (the embedding model)
   * @param maxModelSizeGb MAX_MODEL_SIZE_GB as in force for an organization, when set
   */
  public ModelRoutes(
      ModelCatalog catalog,
      List<ModelCard> extraCards,
      ModelUploads uploads,
      Function<Organization, OptionalInt> maxModelSizeGb) {
    this.catalog = catalog;
    this.extraCards = List.copyOf(extraCards);
    this.uploads = uploads;
    this.maxModelSizeGb = maxModelSizeGb;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(
            "/v1/models",
            Requires.ofInference(
                Requires.anyOf(Scope.INFERENCE_CHAT, Permission.INFERENCE, Permission.MODELS)),
            this::list)
        .get(
            AGENT_MODELS,
            Requires.ofInference(
                Requires.anyOf(Scope.INFERENCE_CHAT, Permission.INFERENCE, Permission.MODELS)),
            this::listForAgent)
        .get(
            "/v1/models/{model_id}",
            Requires.ofInference(
                Requires.anyOf(Scope.INFERENCE_CHAT, Permission.INFERENCE, Permission.MODELS)),
            this::show)
        .post("/v1/models", Requires.permission(Permission.MODELS), this::upload)
        .delete(
            "/v1/models/{model_id}",
            Requires.anyPermission(Permission.MODELS, Permission.TRAINING),
            this::delete);
  }

  /** Multipart upload of a model the local engine then serves to the uploading organization. */
  private void upload(Context ctx) throws IOException {
    LazyBody body = new LazyBody(ctx);
    ModelCatalog.Entry entry;
    try {
      Principal caller = Access.caller(ctx);
      entry = uploads.upload(
          caller.organization(),
          ctx.contentType(),
          ctx.req().getContentLengthLong(),
          body,
          maxModelSizeGb.apply(caller.organization()));
    } catch (ApiException e) {
      RefusedBody.discard(ctx, body.started());
      throw e;
    }
    ctx.status(201);
    Responses.json(ctx, view(entry.card(), true));
  }

  /**
   * The request body, opened at the first read: Jetty answers a client's {@code Expect:
   * 100-continue} as soon as the body is opened, and a refusal before that (permission, declared
   * size) must reach such a client before it sends anything.
   */
  private static final class LazyBody extends InputStream {
    private final Context ctx;
    private InputStream body;

    LazyBody(Context ctx) {
      this.ctx = ctx;
    }

    boolean started() {
      return body != null;
    }

    private InputStream body() throws IOException {
      if (body == null) {
        body = ctx.req().getInputStream();
      }
      return body;
    }

    @Override
    public int read() throws IOException {
      return body().read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return body().read(b, off, len);
    }
  }

  /** Deletes one of the caller's organization's own models (an upload, a fine-tuned model). */
  private void delete(Context ctx) {
    Principal caller = Access.caller(ctx);
    String id = ctx.pathParam("model_id");
    if (!catalog.deleteOrganizationModel(caller.orgId(), id)) {
      if (catalog.find(id).isPresent()) {
        throw ApiException.forbidden(
            "model_not_owned",
            "'" + id + "' is served by this instance; only an organization's"
                + " own models (uploads, fine-tuned models) can be deleted");
      }
      throw ModelCatalog.notFound(id);
    }
    Responses.json(ctx, Map.of("id", id, "object", "model", "deleted", true));
  }

  private Principal reader(Context ctx) {
    return Access.caller(ctx);
  }

  /**
   * The models as seen from inside an agent boundary: the same list, once the caller is shown to
   * reach the agent (a token bound to other agents is refused, as on the agent's chat route).
   */
  private void listForAgent(Context ctx) {
    Principal caller = reader(ctx);
    AgentBoundary.of(ctx, caller, "agentSlug", AGENT_MODELS);
    list(ctx, caller);
  }

  private void list(Context ctx) {
    list(ctx, reader(ctx));
  }

  private void list(Context ctx, Principal caller) {
    List<Map<String, Object>> data = new ArrayList<>();
    for (ModelCard card : visible(caller)) {
      data.add(view(card, extended(caller)));
    }
    Responses.json(ctx, Map.of("object", "list", "data", data));
  }

  private void show(Context ctx) {
    Principal caller = reader(ctx);
    String id = ctx.pathParam("model_id");
    ModelCard card = visible(caller).stream()
        .filter(c -> c.id().equals(id))
        .findFirst()
        .orElseThrow(() -> ModelCatalog.notFound(id));
    Responses.json(ctx, view(card, extended(caller)));
  }

  private static boolean extended(Principal caller) {
    return caller.kind() == Principal.Kind.API_KEY;
  }

  /**
   * Exactly the models the credential may call: for a context token the advertised model, the
   * routed ones its organization sees and the embedding model; for an API key every model of the
   * organization; for either, only those its list of models names when it has one.
   */
  private List<ModelCard> visible(Principal caller) {
    java.util.Map<String, ModelCard> cards = new java.util.LinkedHashMap<>();
    if (!extended(caller)) {
      catalog.advertised().ifPresent(e -> cards.put(e.card().id(), e.card()));
      catalog.routedAll(caller.orgId()).forEach(e -> cards.putIfAbsent(e.card().id(), e.card()));
    } else {
      catalog.all(caller.orgId()).forEach(e -> cards.putIfAbsent(e.card().id(), e.card()));
    }
    extraCards.forEach(card -> cards.putIfAbsent(card.id(), card));
    return cards.values().stream().filter(card -> caller.mayUse(card.id())).toList();
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
