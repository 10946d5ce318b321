package io.engram.actions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.access.Scope;
import io.engram.capabilities.ArgumentCheck;
import io.engram.capabilities.Capability;
import io.engram.capabilities.CapabilityHandler;
import io.engram.capabilities.CapabilityRegistry;
import io.engram.capabilities.CapabilityVersion;
import io.engram.capabilities.ToolSchemas;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.store.Database;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes an assistant's capabilities act in its conversations. {@link #offer} turns the capability
 * set in force for a message into the tools the model is offered: each enabled capability that
 * a built-in handler or the organization's action bridge carries out, with its schema under its
 * config; a context token without {@code actions:request} is offered none. {@link #execute}
 * carries out a call the model made, checked before any effect: the capability is in the set, the
 * credential may request actions, the arguments fit the schema (so the config's limits), the
 * daily limit has room; then it runs, or waits for approval when the config requires it. Every
 * call is audited ({@link Executions}) and counted in {@code /metrics}; the same tool call id is
 * carried out once.
 */
public final class CapabilityExecutor implements io.engram.capabilities.CapabilityBridges {
  private static final Logger LOG = LoggerFactory.getLogger(CapabilityExecutor.class);
  /** Capabilities limited per assistant per day, by the config field holding the limit. */
  private static final Map<String, String> DAILY_LIMITS =
      Map.of("create_orders", "maxOrdersPerDay");

  private static final String APPROVAL = "requiresApproval";

  /**
   * What a conversation as this assistant may call, for one message: the tools offered, by
   * capability id, and every capability id that has a tool (a call of one not offered is still a
   * capability call, refused with its reason, never handed to the client).
   */
  public record Offer(
      String assistantId,
      CapabilityVersion inForce,
      Map<String, ObjectNode> tools,
      Set<String> capabilityTools) {

    public boolean offers(String name) {
      return tools.containsKey(name);
    }

    public boolean isCapability(String name) {
      return capabilityTools.contains(name);
    }
  }

  /** A call the model made: its id, the tool's name, the arguments as JSON text. */
  public record Call(String id, String name, String arguments) {}

  private final CapabilityRegistry registry;
  private final ActionBridges bridges;
  private final Executions executions;
  private final DailyCounts daily;
  private final BridgeCaller bridgeCaller;
  private final MeterRegistry metrics;
  private final Clock clock;

  public CapabilityExecutor(
      CapabilityRegistry registry,
      ActionBridges bridges,
      Executions executions,
      Database db,
      MeterRegistry metrics,
      Egress egress,
      Clock clock) {
    this.registry = registry;
    this.bridges = bridges;
    this.executions = executions;
    this.daily = new DailyCounts(db);
    this.bridgeCaller = new BridgeCaller(bridges, clock, egress);
    this.metrics = metrics;
    this.clock = clock;
  }

  public Offer offer(Principal caller, CapabilityVersion inForce) {
    Map<String, ObjectNode> tools = new LinkedHashMap<>();
    if (mayRequestActions(caller)) {
      for (String id : inForce.set().capabilities()) {
        Capability capability = registry.find(id).orElse(null);
        if (capability != null && carriedOut(caller.orgId(), id)) {
          ToolSchemas.tool(capability, inForce.set().configs().get(id))
              .ifPresent(tool -> tools.put(id, tool));
        }
      }
    }
    return new Offer(inForce.assistantId(), inForce, tools, capabilityTools());
  }

  /** The same assistant's message with no tools (its model cannot call them). */
  public Offer nothing(CapabilityVersion inForce) {
    return new Offer(inForce.assistantId(), inForce, Map.of(), capabilityTools());
  }

  private Set<String> capabilityTools() {
    Set<String> ids = new HashSet<>();
    registry.all().forEach(c -> {
      if (ToolSchemas.parameters(c.id(), Json.MAPPER.createObjectNode()).isPresent()) {
        ids.add(c.id());
      }
    });
    return ids;
  }

  /** Context tokens need {@code actions:request}; API keys and sessions act for the organization. */
  private static boolean mayRequestActions(Principal caller) {
    return caller.kind() != Principal.Kind.CONTEXT_TOKEN || caller.hasScope(Scope.ACTIONS_REQUEST);
  }

  private boolean carriedOut(String orgId, String capabilityId) {
    return registry.handler(capabilityId).isPresent()
        || bridges.forCapability(orgId, capabilityId).isPresent();
  }

  /**
   * Carries out the model's call of a capability tool, or refuses it; what the model is told,
   * as the tool message's content: {@code {status, execution_id, result | reason | approval}}.
   */
  public ObjectNode execute(
      Principal caller, String agent, Offer offer, Call call, String requestId) {
    String capabilityId = call.name();
    JsonNode arguments = arguments(call.arguments());
    Execution claimed = running(
        Ids.newId("exe", clock.millis()),
        caller,
        offer.assistantId(),
        capabilityId,
        offer.inForce().version(),
        call.id(),
        arguments,
        requestId);
    Executions.Claim claim = executions.claim(claimed);
    if (!claim.fresh()) {
      return told(claim.execution()); // the same call again: its first outcome, nothing redone
    }
    Execution execution = claim.execution();
    Optional<String> refusal = refusal(caller, offer, capabilityId, arguments);
    if (refusal.isPresent()) {
      return finish(execution, Execution.Status.REFUSED, null, refusal.get());
    }
    ObjectNode config = offer.inForce().set().configs().get(capabilityId);
    String dailyField = DAILY_LIMITS.get(capabilityId);
    Instant now = clock.instant();
    if (dailyField != null
        && !daily.take(
            caller.orgId(),
            offer.assistantId(),
            capabilityId,
            now,
            config.path(dailyField).asInt())) {
      return finish(
          execution,
          Execution.Status.REFUSED,
          null,
          "The assistant has used its " + config.path(dailyField).asInt() + " " + capabilityId
              + " for today (" + dailyField + "); it may again tomorrow (UTC)");
    }
    if (config.path(APPROVAL).asBoolean(false)) {
      return finish(
          execution,
          Execution.Status.PENDING_APPROVAL,
          null,
          "Waiting for a person's approval (requiresApproval); nothing is done until then");
    }
    return run(caller, agent, execution, config, requestId);
  }

  @Override
  public boolean carries(String orgId, String capabilityId) {
    return bridges.forCapability(orgId, capabilityId).isPresent();
  }

  /**
   * The execute route's call of a bridged capability: recorded as an execution like a model's
   * (its id is the bridge's {@code Idempotency-Key}), run now; a bridge that fails or refuses is a
   * 502 {@code bridge_failed} naming why.
   */
  @Override
  public JsonNode execute(
      Principal caller,
      io.engram.capabilities.Assistant assistant,
      String capabilityId,
      ObjectNode config,
      JsonNode arguments,
      String requestId) {
    String id = Ids.newId("exe", clock.millis());
    Execution execution = executions
        .claim(running(
            id,
            caller,
            assistant.id(),
            capabilityId,
            assistant.version(),
            id,
            arguments,
            requestId))
        .execution();
    ObjectNode told = run(caller, null, execution, config, requestId);
    if (!told.path("status").asText().equals(Execution.Status.EXECUTED.wireName())) {
      throw ApiException.of(
          502,
          io.engram.platform.http.ErrorType.SERVER_ERROR,
          "bridge_failed",
          "The organization's action bridge did not carry out " + capabilityId + ": "
              + told.path("reason").asText("no reason given") + " (execution "
              + execution.id() + ")",
          null);
    }
    return told.get("result");
  }

  /** A new execution, running from now; {@code toolCallId} is the bridge's idempotency key. */
  private Execution running(
      String id,
      Principal caller,
      String assistantId,
      String capabilityId,
      long setVersion,
      String toolCallId,
      JsonNode arguments,
      String requestId) {
    return new Execution(
        id,
        caller.orgId(),
        assistantId,
        capabilityId,
        setVersion,
        toolCallId,
        arguments == null ? Json.MAPPER.createObjectNode() : arguments,
        Execution.Status.RUNNING,
        null,
        null,
        caller.credentialId(),
        requestId,
        clock.instant(),
        null,
        null);
  }

  /** Why the call may not run, checked before any effect; empty when it may. */
  private Optional<String> refusal(
      Principal caller, Offer offer, String capabilityId, JsonNode arguments) {
    if (!mayRequestActions(caller)) {
      return Optional.of("This credential may not request actions (it lacks the scope "
          + Scope.ACTIONS_REQUEST.wireName() + ")");
    }
    if (!offer.inForce().set().capabilities().contains(capabilityId)) {
      return Optional.of("Capability " + capabilityId + " is not enabled on this assistant");
    }
    if (!offer.offers(capabilityId)) {
      return Optional.of(
          "Capability " + capabilityId + " has no handler or action bridge in this organization");
    }
    if (arguments == null) {
      return Optional.of("The arguments are not a JSON object");
    }
    JsonNode schema = offer.tools().get(capabilityId).at("/function/parameters");
    return ArgumentCheck.violation(schema, arguments);
  }

  private ObjectNode run(
      Principal caller, String agent, Execution execution, ObjectNode config, String requestId) {
    Optional<CapabilityHandler> handler = registry.handler(execution.capabilityId());
    try {
      if (handler.isPresent()) {
        JsonNode result = handler
            .get()
            .execute(new CapabilityHandler.Invocation(
                execution.orgId(),
                caller,
                agent,
                execution.assistantId(),
                config,
                execution.arguments(),
                clock.instant(),
                requestId,
                execution.toolCallId()));
        return finish(execution, Execution.Status.EXECUTED, result, null);
      }
      Optional<ActionBridge> bridge =
          bridges.forCapability(execution.orgId(), execution.capabilityId());
      if (bridge.isEmpty()) {
        return failed(execution, "the action bridge was removed");
      }
      BridgeCaller.Outcome outcome = bridgeCaller.call(bridge.get(), execution, config);
      return outcome.failure() == null
          ? finish(execution, Execution.Status.EXECUTED, outcome.result(), null)
          : failed(execution, outcome.failure());
    } catch (ApiException e) {
      return finish(execution, Execution.Status.REFUSED, null, e.getMessage());
    } catch (RuntimeException e) {
      LOG.warn("capability {} failed: {}", execution.capabilityId(), e.toString());
      return failed(execution, "the handler failed");
    }
  }

  /** A failed action created nothing: its daily use is given back. */
  private ObjectNode failed(Execution execution, String reason) {
    if (DAILY_LIMITS.containsKey(execution.capabilityId())) {
      daily.giveBack(
          execution.orgId(),
          execution.assistantId(),
          execution.capabilityId(),
          execution.createdAt());
    }
    return finish(execution, Execution.Status.FAILED, null, reason);
  }

  private ObjectNode finish(
      Execution execution, Execution.Status status, JsonNode result, String reason) {
    executions.finish(execution.id(), status, result, reason);
    Counter.builder("engram_capability_executions_total")
        .description("Capability executions asked for by models, by capability and outcome")
        .tag("capability", execution.capabilityId())
        .tag("status", status.wireName())
        .register(metrics)
        .increment();
    return told(withOutcome(execution, status, result, reason));
  }

  private static Execution withOutcome(
      Execution e, Execution.Status status, JsonNode result, String reason) {
    return new Execution(
        e.id(),
        e.orgId(),
        e.assistantId(),
        e.capabilityId(),
        e.setVersion(),
        e.toolCallId(),
        e.arguments(),
        status,
        result,
        reason,
        e.credentialId(),
        e.requestId(),
        e.createdAt(),
        e.decidedBy(),
        e.decidedAt());
  }

  /** What the model is told of an execution. */
  private static ObjectNode told(Execution execution) {
    ObjectNode told = Json.MAPPER
        .createObjectNode()
        .put("status", execution.status().wireName())
        .put("execution_id", execution.id());
    if (execution.result() != null) {
      told.set("result", execution.result());
    }
    if (execution.reason() != null) {
      told.put("reason", execution.reason());
    }
    return told;
  }

  private static JsonNode arguments(String text) {
    try {
      JsonNode parsed = Json.MAPPER.readTree(text == null || text.isBlank() ? "{}" : text);
      return parsed != null && parsed.isObject() ? parsed : null;
    } catch (IOException e) {
      return null;
    }
  }

  // ---- approvals

  /**
   * Carries out a pending execution a person approved, with the config in force when it was
   * asked; 404 for an execution the organization does not have, 409 when it is not pending.
   */
  public Execution approve(
      String orgId, Principal decider, String executionId, CapabilityVersion asked) {
    Execution pending = decide(orgId, decider, executionId, Execution.Status.RUNNING);
    ObjectNode config = asked.set().configs().get(pending.capabilityId());
    run(decider, null, pending, config == null ? Json.MAPPER.createObjectNode() : config, null);
    return execution(orgId, executionId);
  }

  /** Refuses a pending execution; nothing is carried out and its daily use is given back. */
  public Execution reject(String orgId, Principal decider, String executionId) {
    Execution pending = decide(orgId, decider, executionId, Execution.Status.REJECTED);
    if (DAILY_LIMITS.containsKey(pending.capabilityId())) {
      daily.giveBack(
          pending.orgId(), pending.assistantId(), pending.capabilityId(), pending.createdAt());
    }
    return execution(orgId, executionId);
  }

  private Execution decide(
      String orgId, Principal decider, String executionId, Execution.Status to) {
    Execution execution = execution(orgId, executionId);
    if (execution.status() != Execution.Status.PENDING_APPROVAL
        || !executions.decide(orgId, executionId, to, decider.credentialId(), clock.instant())) {
      throw ApiException.conflict(
          "not_pending",
          "Execution " + executionId + " is not waiting for approval (it is "
              + execution(orgId, executionId).status().wireName() + ")");
    }
    return execution;
  }

  public Execution execution(String orgId, String executionId) {
    return executions
        .get(orgId, executionId)
        .orElseThrow(() -> ApiException.notFound(
            "execution_not_found", "execution_id", "No capability execution " + executionId));
  }

  public List<Execution> executions(
      String orgId, Executions.Filter filter, String beforeId, int limit) {
    return executions.list(orgId, filter, beforeId, limit);
  }
}
