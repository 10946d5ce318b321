package io.engram.inference.routing;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.Carrying;
import io.engram.inference.engine.Embeds;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.ForwardingSink;
import io.engram.inference.engine.GenAiSpans;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.http.ApiException;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import io.engram.platform.tracing.Traces;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * A routed model: each request goes to one of its deployments, picked within the first priority
 * group that has one to offer ({@link RoutedModel.Strategy}: weighted at random, or least busy),
 * and, when that deployment fails before anything reached the client (it could not be reached,
 * answered 429 or 5xx, refused the key), to another: the rest of its group, then the next group,
 * then, while the model's retries last, the same ones again after a backoff. A streamed answer that
 * began is never replayed: a failure after its first byte is the client's. All attempts together
 * stay within the request's time (its organization's REQUEST_TIMEOUT); each call passes the
 * organization's outbound firewall first.
 */
final class RoutedEngine implements Engine, Embeds {
  static final Duration FIRST_BACKOFF = Duration.ofMillis(50);
  static final Duration LONGEST_BACKOFF = Duration.ofSeconds(2);

  private final RoutedModel model;
  private final List<List<Target>> groups;
  private final Cooldowns cooldowns;
  private final RoutingMetrics metrics;
  private final Egress egress;
  private final Duration defaultTimeout;
  private final ProviderAlerts alerts;

  RoutedEngine(
      RoutedModel model,
      List<List<Target>> groups,
      Cooldowns cooldowns,
      RoutingMetrics metrics,
      Egress egress,
      Duration defaultTimeout,
      ProviderAlerts alerts) {
    this.alerts = alerts;
    this.model = model;
    this.groups = groups;
    this.cooldowns = cooldowns;
    this.metrics = metrics;
    this.egress = egress;
    this.defaultTimeout = defaultTimeout;
  }

  RoutedModel model() {
    return model;
  }

  /** The model's first deployment's name at its provider (what a trainer upstream knows it by). */
  String firstDeploymentModel() {
    return model.deployments().isEmpty()
        ? model.model()
        : model.deployments().getFirst().model();
  }

  @Override
  public boolean callsOut() {
    return true;
  }

  /**
   * What the model's operator declared it can do (tools and tool messages when it calls tools, a
   * JSON schema output when it follows one), and what one of its deployments' provider APIs
   * carries: the decision for each deployment is made when it is about to be tried ({@link
   * #generate}).
   */
  @Override
  public boolean carries(String field, JsonNode value) {
    boolean declared = switch (field) {
      case "tools", "tool_choice", "parallel_tool_calls" -> model.capabilities().tools();
      case "response_format" ->
        !value.path("type").asText().equals("json_schema")
            || model.capabilities().jsonSchema();
      case Engine.IMAGES -> model.capabilities().vision();
      default -> true;
    };
    if (!declared) {
      return false;
    }
    for (List<Target> group : groups) {
      for (Target target : group) {
        if (target.engine.carries(field, value)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Generates on the deployments in routing order. One whose provider's API cannot carry a part
   * of this request (Anthropic and a seed, say) is passed over for the next, or, where the
   * organization drops such parameters (DROP_PARAMS), sent the request without it; when none is
   * left that could take it, a 400 names the part and the deployments.
   */
  @Override
  public Generation generate(GenerationRequest request, TokenSink sink) {
    Map<Target, String> passedOver = new LinkedHashMap<>();
    if (!request.dropsUnsupported()) {
      for (List<Target> group : groups) {
        for (Target target : group) {
          String param = Carrying.firstNotCarried(target.engine, request);
          if (param != null) {
            passedOver.put(target, param);
          }
        }
      }
      refuseWhenNoneCarries(passedOver);
    }
    return route(
        request.orgId(),
        timeoutOf(request.timeout()),
        passedOver.keySet(),
        (target, share, attempts) -> {
          Attempt attempt = new Attempt(sink, target.id, attempts);
          try {
            return target.engine.generate(share == null ? request : request.within(share), attempt);
          } catch (EngineException e) {
            if (attempt.begun && request.stream()) {
              throw new Committed(e); // the client has the stream's start: never replayed
            }
            throw e;
          }
        });
  }

  /** A 400 when every deployment of the model was passed over for what the request asks. */
  private void refuseWhenNoneCarries(Map<Target, String> passedOver) {
    int deployments = groups.stream().mapToInt(List::size).sum();
    if (passedOver.isEmpty() || passedOver.size() < deployments) {
      return;
    }
    String param = passedOver.values().iterator().next();
    throw ApiException.invalid(
        "unsupported_parameter",
        param,
        "No deployment of the model '" + model.model() + "' can carry out this request on its "
            + "provider's API: "
            + passedOver.entrySet().stream()
                .map(e -> e.getKey().id + " on the provider '" + e.getKey().providerName
                    + "' cannot carry '"
                    + e.getValue() + "'")
                .collect(Collectors.joining(", "))
            + "; leave it out, or set the organization's DROP_PARAMS variable to true to have "
            + "such parameters dropped");
  }

  /** An embedding model's vectors, routed as a generation is. */
  @Override
  public Vectors embed(
      List<String> texts, Integer dimensions, String user, Duration timeout, String orgId) {
    Duration whole = timeoutOf(timeout);
    return route(
        orgId,
        whole,
        Set.of(),
        (target, share, attempts) -> target
            .engine
            .embed(texts, dimensions, user, share == null ? whole : share, orgId)
            .answeredBy(target.id));
  }

  /**
   * The count of the deployment a generation would go to now (routed as one: the firewall, rests
   * and fallbacks), or empty where that deployment's API does not count.
   */
  @Override
  public OptionalInt countTokens(GenerationRequest request) {
    return route(
        request.orgId(),
        timeoutOf(request.timeout()),
        Set.of(),
        (target, share, attempts) ->
            target.engine.countTokens(share == null ? request : request.within(share)));
  }

  /** One attempt on one deployment; {@code share} is its time (null: the request's whole). */
  @FunctionalInterface
  private interface Call<T> {
    T run(Target target, Duration share, int attempts);
  }

  /** A failure after the client got the answer's start: no other deployment may take over. */
  private static final class Committed extends RuntimeException {
    private final EngineException failure;

    Committed(EngineException failure) {
      super(failure.getMessage(), failure, false, false);
      this.failure = failure;
    }
  }

  /**
   * Runs {@code call} on the deployments in routing order until one answers; {@code passedOver}
   * are not tried at all (they cannot carry the request).
   */
  private <T> T route(String orgId, Duration timeout, Set<Target> passedOver, Call<T> call) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Set<Target> tried = new HashSet<>(passedOver);
    // Not tried again in this request: the firewall blocks it, it refused the key or it asked
    // the gateway to slow down (and those passed over).
    Set<Target> spent = new HashSet<>(passedOver);
    List<String> failures = new ArrayList<>();
    RuntimeException last = null;
    int attempts = 0;
    int round = 0;
    while (true) {
      Target target = pick(tried);
      if (target == null) {
        if (spent.size() == tried.size() || round == model.retries()) {
          break; // nothing left that another attempt could change, or no retry left
        }
        tried.retainAll(spent); // a new round over the others, after a pause
        round++;
        if (!pause(backoff(round, last), deadline)) {
          break;
        }
        continue;
      }
      tried.add(target);
      long remaining = deadline - System.nanoTime();
      if (remaining <= 0) {
        break;
      }
      try {
        egress.admit(orgId, target.origin);
      } catch (OutboundBlocked e) {
        metrics.attempt(target.id, "outbound_blocked", 0);
        spent.add(target);
        last = ApiException.forbidden("outbound_blocked", e.getMessage());
        failures.add(target.id + ": outbound blocked");
        continue;
      }
      attempts++;
      if (attempts > 1) {
        metrics.retried(model.model());
      }
      long started = System.nanoTime();
      target.inFlight.incrementAndGet();
      // The provider call's span says which deployment and attempt it was.
      try (Scope ignored = Traces.callsWith(
          Attributes.of(GenAiSpans.DEPLOYMENT, target.id, GenAiSpans.ATTEMPT, (long) attempts))) {
        // The first attempt on a deployment without a timeout of its own has the request's whole
        // time, as its organization set it; later ones what is left.
        T result = call.run(
            target,
            attempts == 1 && target.timeout == null ? null : attemptTimeout(target, remaining),
            attempts);
        metrics.attempt(target.id, RoutingMetrics.COMPLETED, System.nanoTime() - started);
        cooldowns.succeeded(target.id);
        if (!target.misconfiguredFor.isEmpty() && target.misconfiguredFor.remove(orgId)) {
          alerts.report(
              orgId,
              false,
              "The deployment " + target.id + " of the model '" + model.model()
                  + "' answers again");
        }
        return result;
      } catch (Committed e) {
        metrics.attempt(target.id, e.failure.failure().code(), System.nanoTime() - started);
        throw e.failure;
      } catch (EngineException e) {
        metrics.attempt(target.id, e.failure().code(), System.nanoTime() - started);
        if (!retryable(e)) {
          throw e;
        }
        failed(orgId, target, e);
        if (restsAtOnce(e)) {
          spent.add(target);
        }
        last = e;
        failures.add(target.id + ": " + e.failure().code());
      } finally {
        target.inFlight.decrementAndGet();
      }
    }
    throw exhausted(last, failures, attempts);
  }

  /** A deployment's failure: counted toward its rest; a refused key or model also alerts. */
  private void failed(String orgId, Target target, EngineException e) {
    cooldowns.failed(target.id, restsAtOnce(e), restFor(e));
    if (e.failure() == EngineException.Failure.MISCONFIGURED && orgId != null) {
      target.misconfiguredFor.add(orgId);
      alerts.report(
          orgId,
          true,
          "The provider '" + target.providerName + "' refused the "
              + "deployment " + target.id + " of the model '" + model.model() + "': "
              + e.getMessage());
    }
  }

  /**
   * The next deployment to try: the first priority group with one not tried and not resting;
   * when every one left is resting, the one whose rest ends first (a probe); null when all were
   * tried.
   */
  Target pick(Set<Target> tried) {
    for (List<Target> group : groups) {
      Target chosen = choose(group, tried);
      if (chosen != null) {
        return chosen;
      }
    }
    Target probe = null;
    for (List<Target> group : groups) {
      for (Target t : group) {
        // A weight of 0 drains a deployment: it takes no request, not even as a probe.
        if (t.weight > 0
            && !tried.contains(t)
            && (probe == null || cooldowns.coolingUntil(t.id) < cooldowns.coolingUntil(probe.id))) {
          probe = t;
        }
      }
    }
    return probe;
  }

  private Target choose(List<Target> group, Set<Target> tried) {
    if (model.strategy() == RoutedModel.Strategy.LEAST_BUSY) {
      Target best = null;
      for (Target t : group) {
        if (available(t, tried)
            && (best == null
                || t.inFlight.get() < best.inFlight.get()
                || t.inFlight.get() == best.inFlight.get() && t.weight > best.weight)) {
          best = t;
        }
      }
      return best;
    }
    int total = 0;
    for (Target t : group) {
      if (available(t, tried)) {
        total += t.weight;
      }
    }
    if (total == 0) {
      return null;
    }
    int ticket = ThreadLocalRandom.current().nextInt(total);
    for (Target t : group) {
      if (available(t, tried)) {
        ticket -= t.weight;
        if (ticket < 0) {
          return t;
        }
      }
    }
    return null;
  }

  private boolean available(Target t, Set<Target> tried) {
    return t.weight > 0 && !tried.contains(t) && !cooldowns.isCooling(t.id);
  }

  /**
   * Failures another attempt may cure: the deployment's, not the request's. A timeout is one
   * when the provider's own timeout is shorter than the request's: the time left goes to another.
   */
  private static boolean retryable(EngineException e) {
    return switch (e.failure()) {
      case UNAVAILABLE, RATE_LIMITED, UPSTREAM_ERROR, MISCONFIGURED, MALFORMED, CUT, TIMEOUT ->
        true;
      default -> false;
    };
  }

  /** A 429 and a refused key rest the deployment at once; other failures count toward it. */
  private static boolean restsAtOnce(EngineException e) {
    return e.failure() == EngineException.Failure.RATE_LIMITED
        || e.failure() == EngineException.Failure.MISCONFIGURED;
  }

  private static Duration restFor(EngineException e) {
    if (e.failure() == EngineException.Failure.MISCONFIGURED) {
      return Cooldowns.LONGEST;
    }
    return e.retryAfterSeconds() == null ? null : Duration.ofSeconds(e.retryAfterSeconds());
  }

  private Duration timeoutOf(Duration requested) {
    return requested == null ? defaultTimeout : requested;
  }

  private static Duration attemptTimeout(Target target, long remainingNanos) {
    Duration remaining = Duration.ofNanos(remainingNanos);
    return target.timeout != null && target.timeout.compareTo(remaining) < 0
        ? target.timeout
        : remaining;
  }

  /** Exponential with jitter; at least what a 429's Retry-After asked when it asked less than 2 s. */
  static Duration backoff(int round, RuntimeException last) {
    long base = FIRST_BACKOFF.toMillis() << Math.min(round - 1, 10);
    long millis = Math.min(LONGEST_BACKOFF.toMillis(), base);
    if (last instanceof EngineException e && e.retryAfterSeconds() != null) {
      millis = Math.max(millis, Math.min(LONGEST_BACKOFF.toMillis(), e.retryAfterSeconds() * 1000));
    }
    return Duration.ofMillis(millis / 2 + ThreadLocalRandom.current().nextLong(millis / 2 + 1));
  }

  /** Waits, unless the wait would end past the deadline; false then. */
  private static boolean pause(Duration wait, long deadline) {
    if (System.nanoTime() + wait.toNanos() >= deadline) {
      return false;
    }
    LockSupport.parkNanos(wait.toNanos());
    return true;
  }

  /** One clear failure for a request no deployment answered, naming the last failure. */
  private RuntimeException exhausted(RuntimeException last, List<String> failures, int attempts) {
    if (last == null) {
      return new EngineException(
          EngineException.Failure.UNAVAILABLE,
          "No deployment of the model '" + model.model() + "' could take the request");
    }
    if (attempts <= 1) {
      return last; // one attempt: its own failure says it all
    }
    if (last instanceof EngineException e) {
      String message = "The model '" + model.model() + "' failed on " + attempts
          + (attempts == 1 ? " attempt" : " attempts") + " (" + String.join(", ", failures)
          + "); the last: " + e.getMessage();
      return new EngineException(e.failure(), message, e.retryAfterSeconds(), e);
    }
    return last;
  }

  /** The client's sink, told which deployment answers before it begins. */
  private static final class Attempt extends ForwardingSink {
    private final String deployment;
    private final int attempts;
    boolean begun;

    Attempt(TokenSink sink, String deployment, int attempts) {
      super(sink);
      this.deployment = deployment;
      this.attempts = attempts;
    }

    @Override
    public void begin() {
      begun = true;
      sink.answeredBy(deployment, attempts);
      sink.begin();
    }
  }
}
