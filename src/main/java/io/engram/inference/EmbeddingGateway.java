package io.engram.inference;

import io.engram.access.InferenceDoor;
import io.engram.access.Principal;
import io.engram.inference.call.ModelCall;
import io.engram.inference.call.ModelCalls;
import io.engram.inference.call.Origin;
import io.engram.inference.engine.Embeds;
import io.engram.inference.models.ModelCatalog;
import io.engram.inference.usage.BilledTokens;
import io.engram.inference.usage.InferenceLimits;
import io.engram.memory.Embedder;
import io.engram.platform.TokenCounter;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The embeddings' service: the in-process model or a routed embedding model, each admitted
 * against the plan's hourly tokens and concurrency and the budgets in money, at what its model is
 * expected to charge for the inputs ({@link BilledTokens}), and run through the model call's
 * stages like any generation.
 */
public final class EmbeddingGateway {
  private static final String EMBEDDINGS = "/v1/embeddings";

  /** Vectors of the inputs and the hour's budget after them (null when the plan has none). */
  public record Embedded(Embedder.Embeddings embeddings, InferenceLimits.TokenBudget budget) {}

  private final ModelCatalog catalog;
  private final InferenceLimits limits;
  private final OrganizationConfigs configs;
  private final Embedder embedder;
  private final ModelCalls calls;
  private final BilledTokens billedTokens;

  EmbeddingGateway(
      ModelCatalog catalog,
      InferenceLimits limits,
      OrganizationConfigs configs,
      Embedder embedder,
      ModelCalls calls,
      BilledTokens billedTokens) {
    this.catalog = catalog;
    this.limits = limits;
    this.configs = configs;
    this.embedder = embedder;
    this.calls = calls;
    this.billedTokens = billedTokens;
  }

  /**
   * Embeds the inputs on the in-process model. Embedding tokens are tokens: they count against the
   * plan's hourly budget and concurrency too, reserved at what the model is expected to count.
   */
  public Embedded embed(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      String model,
      List<String> inputs,
      String requestId) {
    long estimate = inputs.stream().mapToLong(TokenCounter::count).sum();
    return embedded(
        new EmbeddingCall(caller, config(caller), null, model, estimate, requestId),
        atDoor,
        InferenceLimits.TokenDemand.exactly(estimate, billedTokens.ratio(caller.orgId(), model)),
        InferenceLimits.Spending.FREE,
        () -> {
          Embedder.Embeddings counted = embedder.embedCounted(inputs);
          return new Embeds.Vectors(counted.vectors(), counted.tokens(), null);
        });
  }

  /**
   * Embeds the inputs on a routed embedding model: admitted at what its provider is expected to
   * bill and charged what it billed (the gateway's count when it gives none), recorded under the
   * deployment that answered, with the model's cost.
   */
  public Embedded embedRouted(
      Principal caller,
      Optional<InferenceDoor.Pass> atDoor,
      String model,
      List<String> inputs,
      Integer dimensions,
      String user,
      String requestId) {
    ModelCatalog.Entry entry = catalog
        .routedEmbedding(caller.orgId(), model)
        .orElseThrow(() -> ModelCatalog.notFound(model));
    long estimate = inputs.stream().mapToLong(TokenCounter::count).sum();
    InferenceLimits.TokenDemand demand =
        InferenceLimits.TokenDemand.exactly(estimate, billedTokens.ratio(caller.orgId(), model));
    EffectiveConfig config = config(caller);
    return embedded(
        new EmbeddingCall(caller, config, entry, model, estimate, requestId),
        atDoor,
        demand,
        new InferenceLimits.Spending(null, entry.pricing().costNanos(demand.inputsCharged(), 0)),
        () -> ((Embeds) entry.engine())
            .embed(
                inputs, dimensions, user, EngineVariables.requestTimeout(config), caller.orgId()));
  }

  /** Who asks which model to embed what the gateway counts as {@code estimate} tokens. */
  private record EmbeddingCall(
      Principal caller,
      EffectiveConfig config,
      ModelCatalog.Entry entry,
      String model,
      long estimate,
      String requestId) {}

  /** Admits an embeddings call at {@code demand} and {@code spending}, and runs it on {@code embed}. */
  private Embedded embedded(
      EmbeddingCall asked,
      Optional<InferenceDoor.Pass> atDoor,
      InferenceLimits.TokenDemand demand,
      InferenceLimits.Spending spending,
      Supplier<Embeds.Vectors> embed) {
    Principal caller = asked.caller();
    Origin origin = new Origin(EMBEDDINGS, null, null, null, calls.now());
    try (ModelCall call = ModelCall.embeddings(
        caller,
        asked.config(),
        asked.entry(),
        asked.model(),
        (int) asked.estimate(),
        calls.admit(
            caller,
            asked.model(),
            origin,
            asked.requestId(),
            () -> limits.admit(caller, atDoor, demand, spending)),
        asked.requestId(),
        origin)) {
      return new Embedded(calls.embed(call, embed), call.budget());
    }
  }

  /** The organization's settings in force, looked up once a call (null: no organization). */
  private EffectiveConfig config(Principal caller) {
    return caller.organization() == null ? null : configs.effective(caller.organization());
  }
}
