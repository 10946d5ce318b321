package io.engram.inference.call;

import io.engram.access.Principal;
import io.engram.inference.engine.Generation;
import io.engram.inference.usage.BilledTokens;
import io.engram.inference.usage.UsageLedger;

/**
 * Settles a call with its organization's usage and budgets however it ended: the tokens it was
 * charged and their cost are recorded under the deployment that answered (before the permit
 * settles, so the hour never misses them in between) and charged to the permit, whose hourly
 * budget and money budgets held a reservation for them, and what an answer charged for its inputs
 * teaches the ratio the next ones are reserved at ({@link BilledTokens}); a call served from the cache costs
 * nothing and is counted as a hit. A failure of the service is counted as an error; a client that
 * went away is not the service's failure.
 */
final class SettlementStage implements Stage {
  private final UsageLedger usage;
  private final InferenceMetrics metrics;
  private final BilledTokens billedTokens;

  SettlementStage(UsageLedger usage, InferenceMetrics metrics, BilledTokens billedTokens) {
    this.usage = usage;
    this.metrics = metrics;
    this.billedTokens = billedTokens;
  }

  @Override
  public Ended intercept(Chain chain) {
    Ended ended = chain.proceed(chain.sink());
    ModelCall call = chain.call();
    Principal caller = call.caller();
    if (ended.kind() == Ended.Kind.REPLAYED) {
      usage.cacheHit(caller.orgId(), caller.credentialId(), call.modelId());
      return ended;
    }
    Generation.Usage charged = ended.charged();
    if (ended.answered()) {
      // What the answer charged for the inputs the gateway counted: the next reservations' ratio.
      billedTokens.charged(
          caller.orgId(), call.modelId(), call.promptTokens(), charged.promptTokens());
    }
    usage.record(
        caller.orgId(),
        caller.credentialId(),
        call.modelId(),
        ended.run().deployment(),
        charged,
        charged.total() == 0 ? 0 : call.memoryTokens(),
        ended.costNanos());
    call.permit().charge(charged.total());
    call.permit().chargeCost(ended.costNanos());
    metrics.tokens(call.modelId(), charged, call.memoryTokens());
    usage.finished(
        caller.orgId(),
        caller.credentialId(),
        call.modelId(),
        ended.run().deployment(),
        ended.failedByService(),
        ended.run().endedNanos() - ended.run().startedNanos());
    return ended;
  }
}
