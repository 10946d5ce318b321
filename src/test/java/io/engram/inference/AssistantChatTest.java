package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Capabilities that act, through real HTTP: a chat as an assistant is offered its capabilities as
 * tools; the fake upstream, told by a {@code [call:NAME ARGS]} in the message, calls one; Engram
 * checks the call against the assistant's config, carries it out through a bridge (a local HTTP
 * server that checks the signature) or a built-in handler, gives the model the result and lets it
 * answer. Refusals, approvals, per-message capability sets and idempotency are each proved here.
 */
class AssistantChatTest {
  @RegisterExtension
  static final GatewayFixture gateway =
      new GatewayFixture("growth", Map.of("ENGRAM_ALERT_INTERVAL_SECONDS", "1"));

  static String admin;
  /** A context token that may request actions. */
  static String actor;

  static ActionFixtures actions;
  static ActionFixtures.Bridge orders;
  static ActionFixtures.Bridge refunds;

  private static final String ORDER = "[call:create_orders {\"order_type\":\"purchase\","
      + "\"items\":[{\"sku\":\"A1\",\"quantity\":2}]}]";

  @BeforeAll
  static void setUp() throws IOException {
    admin = gateway.server.apiKey(gateway.orgId, 1000, "admin");
    actor = gateway.server.token(
        gateway.orgId, null, "inference:chat", "actions:request", "memory:read", "memory:write");
    actions = new ActionFixtures(gateway.server, gateway.orgId, admin);
    orders = actions.bridge("create_orders");
    refunds = actions.bridge("process_refunds");
  }

  @AfterAll
  static void stop() {
    orders.server.stop(0);
    refunds.server.stop(0);
  }

  // ---- the proofs

  @Test
  void aChatCreatesAnOrderThroughTheBridge() {
    String assistant = assistant(ordersConfig(3, false));
    int before = gateway.upstream.requests().size();
    Http.Response reply = chat(actor, assistant, "Order two A1, please. " + ORDER, "");
    assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    assertThat(reply.json().at("/choices/0/message/content").asText())
        .isEqualTo("Hello from the upstream.");
    assertThat(reply.json().at("/choices/0/finish_reason").asText()).isEqualTo("stop");
    assertThat(reply.header(AssistantChatRoutes.TOOLS_HEADER)).contains("create_orders");

    // The model was offered the capability with the config's order types as the enum.
    JsonNode offered = gateway.upstream.requests().get(before);
    JsonNode tool = tool(offered, "create_orders");
    assertThat(tool.at("/function/parameters/properties/order_type/enum"))
        .extracting(JsonNode::asText)
        .containsExactly("purchase", "restock");
    // The bridge got one signed call, with the tool call id as the idempotency key.
    ActionFixtures.Bridge.Received received = orders.last();
    assertThat(received.signatureValid()).isTrue();
    assertThat(received.body().at("/arguments/order_type").asText()).isEqualTo("purchase");
    assertThat(received.body().get("assistant_id").asText()).isEqualTo(assistant);
    assertThat(received.idempotencyKey())
        .isEqualTo(received.body().get("tool_call_id").asText());
    // The model saw the bridge's answer, then answered.
    JsonNode told = lastToolResult();
    assertThat(told.get("status").asText()).isEqualTo("executed");
    assertThat(told.at("/result/order_id").asText()).startsWith("ord_");
    JsonNode audited = executions("assistant_id=" + assistant).get(0);
    assertThat(audited.get("status").asText()).isEqualTo("executed");
    assertThat(audited.get("capability").asText()).isEqualTo("create_orders");
    assertThat(audited.get("capability_set_version").asInt()).isEqualTo(2);
    assertThat(audited.at("/result/order_id").asText())
        .isEqualTo(told.at("/result/order_id").asText());
  }

  /**
   * One rule for the execute route and chats: a capability the organization's bridge carries out
   * is executable (listed so, and run through the bridge), not a 501.
   */
  @Test
  void theExecuteRouteRunsABridgedCapabilityAsAChatWould() {
    String assistant = assistant(ordersConfig(3, false));
    int before = orders.count();
    Http.Response executed = gateway
        .server
        .http
        .post("/api/assistants/" + assistant + "/capabilities/create_orders/execute")
        .bearer(admin)
        .json("{\"arguments\":{\"order_type\":\"purchase\",\"items\":[{\"sku\":\"A1\","
            + "\"quantity\":1}]}}")
        .send();
    assertThat(executed.status()).as(executed.text()).isEqualTo(200);
    assertThat(executed.json().at("/result/order_id").asText()).startsWith("ord_");
    assertThat(orders.count()).isEqualTo(before + 1);
    assertThat(orders.last().signatureValid()).isTrue();
    assertThat(executions("assistant_id=" + assistant).get(0).get("status").asText())
        .isEqualTo("executed");
    JsonNode registry = gateway
        .server
        .http
        .get("/api/capabilities/registry")
        .bearer(admin)
        .send()
        .json()
        .get("capabilities");
    boolean listedExecutable = false;
    for (JsonNode entry : registry) {
      if (entry.get("id").asText().equals("create_orders")) {
        listedExecutable = entry.get("executable").asBoolean();
      }
    }
    assertThat(listedExecutable).isTrue();
  }

  @Test
  void whatTheConfigDoesNotAllowIsRefusedToTheModelAndAudited() {
    String assistant = assistant(ordersConfig(3, false));
    int calls = orders.count();
    chat(
        actor,
        assistant,
        "[call:create_orders {\"order_type\":\"rental\",\"items\":[{\"sku\":"
            + "\"A1\",\"quantity\":1}]}]",
        "");
    JsonNode told = lastToolResult();
    assertThat(told.get("status").asText()).isEqualTo("refused");
    assertThat(told.get("reason").asText()).contains("'rental' is not allowed");
    for (int i = 0; i < 3; i++) {
      assertThat(chat(actor, assistant, ORDER, "").status()).isEqualTo(200);
      assertThat(lastToolResult().get("status").asText()).isEqualTo("executed");
    }
    chat(actor, assistant, ORDER, "");
    told = lastToolResult();
    assertThat(told.get("status").asText()).isEqualTo("refused");
    assertThat(told.get("reason").asText()).contains("used its 3 create_orders for today");
    assertThat(orders.count()).isEqualTo(calls + 3);
    List<String> reasons = new ArrayList<>();
    executions("assistant_id=" + assistant + "&status=refused")
        .forEach(e -> reasons.add(e.get("reason").asText()));
    assertThat(reasons).hasSize(2);
    assertThat(reasons.get(0)).contains("maxOrdersPerDay");
    assertThat(reasons.get(1)).contains("rental");
  }

  @Test
  void aTokenWithoutActionsRequestIsOfferedNoToolsAndRefused() {
    String assistant = assistant(ordersConfig(3, false));
    String answersOnly = gateway.server.token(gateway.orgId, null, "inference:chat");
    int before = gateway.upstream.requests().size();
    int calls = orders.count();
    Http.Response reply = chat(answersOnly, assistant, ORDER, "");
    assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    assertThat(reply.header(AssistantChatRoutes.TOOLS_HEADER)).isEmpty();
    assertThat(gateway.upstream.requests().get(before).has("tools")).isFalse();
    // The model called the capability anyway (the fake makes the name up): refused, with why.
    JsonNode told = lastToolResult();
    assertThat(told.get("status").asText()).isEqualTo("refused");
    assertThat(told.get("reason").asText()).contains("actions:request");
    assertThat(orders.count()).isEqualTo(calls);
    assertThat(executions("assistant_id=" + assistant).get(0).get("status").asText())
        .isEqualTo("refused");
  }

  @Test
  void anOrderThatNeedsApprovalWaitsForAnAdmin() {
    String assistant = assistant(ordersConfig(10, true));
    int calls = orders.count();
    chat(actor, assistant, ORDER, "");
    JsonNode told = lastToolResult();
    assertThat(told.get("status").asText()).isEqualTo("pending_approval");
    assertThat(orders.count()).isEqualTo(calls);
    String pending = told.get("execution_id").asText();
    assertThat(executions("assistant_id=" + assistant + "&status=pending_approval"))
        .extracting(e -> e.get("id").asText())
        .containsExactly(pending);

    // Only an admin of the organization decides; a chat token cannot.
    assertThat(decide(actor, pending, "approve").status()).isEqualTo(403);
    Http.Response approved = decide(admin, pending, "approve");
    assertThat(approved.status()).as(approved.text()).isEqualTo(200);
    assertThat(approved.json().get("status").asText()).isEqualTo("executed");
    assertThat(approved.json().get("decided_by").asText()).isNotEmpty();
    assertThat(approved.json().at("/result/order_id").asText()).startsWith("ord_");
    assertThat(orders.count()).isEqualTo(calls + 1);
    assertThat(decide(admin, pending, "approve").status()).isEqualTo(409);

    chat(actor, assistant, ORDER, "");
    String second = lastToolResult().get("execution_id").asText();
    Http.Response rejected = decide(admin, second, "reject");
    assertThat(rejected.json().get("status").asText()).isEqualTo("rejected");
    assertThat(orders.count()).isEqualTo(calls + 1);
  }

  @Test
  void aPatchBetweenTwoMessagesChangesTheToolsOfTheSecondOnly() {
    String assistant = assistant(ordersConfig(3, false));
    int before = gateway.upstream.requests().size();
    Http.Response first = chat(actor, assistant, "Hello", "");
    assertThat(first.header(AssistantChatRoutes.SET_VERSION_HEADER)).isEqualTo("2");
    assertThat(tool(gateway.upstream.requests().get(before), "create_orders")).isNotNull();

    patch(assistant, "{\"capabilities\":[\"answer_questions\",\"search_org_knowledge\"]}");
    before = gateway.upstream.requests().size();
    Http.Response second = chat(actor, assistant, "Hello again", "");
    assertThat(second.header(AssistantChatRoutes.SET_VERSION_HEADER)).isEqualTo("3");
    assertThat(second.header(AssistantChatRoutes.TOOLS_HEADER)).isEqualTo("search_org_knowledge");
    JsonNode sent = gateway.upstream.requests().get(before);
    assertThat(tool(sent, "create_orders")).isNull();
    assertThat(tool(sent, "search_org_knowledge")).isNotNull();
    // A model that still calls the removed capability is refused: it is not enabled any more.
    chat(actor, assistant, ORDER, "");
    assertThat(lastToolResult().get("reason").asText()).contains("not enabled");
  }

  @Test
  void theSameToolCallIdTwiceRunsTheBridgeOnce() {
    String assistant = assistant(ordersConfig(10, false));
    String once = "[call#call_retry_1:create_orders {\"order_type\":\"restock\",\"items\":"
        + "[{\"sku\":\"B2\",\"quantity\":1}]}]";
    int calls = orders.count();
    chat(actor, assistant, once, "");
    JsonNode first = lastToolResult();
    chat(actor, assistant, once, "");
    JsonNode again = lastToolResult();
    assertThat(orders.count()).isEqualTo(calls + 1);
    assertThat(again.get("execution_id").asText())
        .isEqualTo(first.get("execution_id").asText());
    assertThat(again.at("/result/order_id").asText())
        .isEqualTo(first.at("/result/order_id").asText());
    assertThat(executions("assistant_id=" + assistant)).hasSize(1);
  }

  @Test
  void aStreamingClientSeesAnOrdinaryStream() {
    String assistant = assistant(ordersConfig(10, false));
    Http.Response reply = chat(
        actor, assistant, ORDER, "\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    assertThat(reply.status()).isEqualTo(200);
    List<String> events = GatewayFixture.events(reply.text());
    assertThat(events.getLast()).isEqualTo("[DONE]");
    StringBuilder text = new StringBuilder();
    List<String> finishes = new ArrayList<>();
    String id = null;
    for (String event : events.subList(0, events.size() - 1)) {
      JsonNode chunk = Json.read(event, JsonNode.class);
      id = id == null ? chunk.get("id").asText() : id;
      assertThat(chunk.get("id").asText()).isEqualTo(id);
      JsonNode choice = chunk.at("/choices/0");
      assertThat(choice.at("/delta/tool_calls").isMissingNode()).isTrue();
      text.append(choice.at("/delta/content").asText(""));
      if (choice.hasNonNull("finish_reason")) {
        finishes.add(choice.get("finish_reason").asText());
      }
    }
    assertThat(text.toString()).isEqualTo("Hello from the upstream.");
    assertThat(finishes).containsExactly("stop");
    assertThat(lastToolResult().get("status").asText()).isEqualTo("executed");
    JsonNode usage = Json.read(events.get(events.size() - 2), JsonNode.class).get("usage");
    // Both steps are counted: more prompt than the same message in one plain step.
    JsonNode plain = gateway
        .chat(
            gateway.token,
            GatewayFixture.body(
                ORDER, "\"stream\":true," + "\"stream_options\":{\"include_usage\":true}"))
        .send()
        .text()
        .lines()
        .filter(line -> line.contains("\"usage\":{"))
        .map(line -> Json.read(line.substring(6), JsonNode.class).get("usage"))
        .findFirst()
        .orElseThrow();
    assertThat(usage.get("prompt_tokens").asInt())
        .isGreaterThan(plain.get("prompt_tokens").asInt());
  }

  @Test
  void knowledgeSearchAnswersFromMemoryWithItsCitation() {
    String memory = gateway.remember("The Lyon warehouse closes at six on Fridays.", null);
    String assistant =
        assistant("{\"capabilities\":[\"answer_questions\",\"search_org_knowledge\"]}");
    chat(
        actor,
        assistant,
        "[call:search_org_knowledge {\"query\":\"When does the Lyon warehouse close?\"}]",
        "\"memory\":false");
    JsonNode told = lastToolResult();
    assertThat(told.get("status").asText()).isEqualTo("executed");
    assertThat(told.at("/result/memories/0/id").asText()).isEqualTo(memory);
    assertThat(told.at("/result/context").asText()).contains("six on Fridays");
  }

  @Test
  void decisionsAreWrittenToMemoryWithTheirProvenance() {
    String assistant =
        assistant("{\"capabilities\":[\"answer_questions\",\"track_team_decisions\"]}");
    chat(
        actor,
        assistant,
        "[call:track_team_decisions {\"decision\":\"We ship on Thursdays\",\"team\":\"ops\"}]",
        "\"memory\":false");
    JsonNode told = lastToolResult();
    assertThat(told.get("status").asText()).isEqualTo("executed");
    String id = told.at("/result/id").asText();
    JsonNode stored =
        gateway.server.http.get("/v1/memory/" + id).bearer(gateway.token).send().json();
    assertThat(stored.get("text").asText()).startsWith("We ship on Thursdays");
    assertThat(stored.at("/metadata/capability").asText()).isEqualTo("track_team_decisions");
    assertThat(stored.at("/metadata/assistantId").asText()).isEqualTo(assistant);
  }

  @Test
  void aReminderFallsDueOnTheOrganizationsWebhook() throws Exception {
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    HttpServer hook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    hook.createContext("/", exchange -> {
      events.add(Json.read(
          new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8),
          JsonNode.class));
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
    });
    hook.start();
    try {
      assertThat(gateway
              .server
              .http
              .post("/v1/organizations/" + gateway.orgId + "/alert-channels")
              .bearer(admin)
              .json("{\"url\":\"http://127.0.0.1:" + hook.getAddress().getPort() + "/hook\"}")
              .send()
              .status())
          .isEqualTo(201);
      // Reminders are a personal assistant's (scope user).
      String owner = gateway
          .server
          .createUser(gateway.orgId, "dana@example.com", "member", "correct-horse-battery")
          .get("id")
          .asText();
      Http.Response created = gateway
          .server
          .http
          .post("/api/assistants")
          .bearer(admin)
          .json(
              "{\"name\":\"Dana's\",\"type\":\"employee_personal\",\"ownerId\":\"" + owner + "\"}")
          .send();
      String assistant = created.json().at("/assistant/_id").asText();
      patch(assistant, "{\"capabilities\":[\"answer_questions\",\"set_reminders\"]}");
      String due =
          gateway.server.clock.instant().plus(java.time.Duration.ofHours(1)).toString();
      chat(
          admin,
          assistant,
          "[call:set_reminders {\"text\":\"Call Ada\",\"due_at\":\"" + due + "\"}]",
          "\"memory\":false");
      JsonNode told = lastToolResult();
      assertThat(told.get("status").asText()).as(told.toString()).isEqualTo("executed");
      String reminder = told.at("/result/reminder_id").asText();
      Thread.sleep(1500);
      assertThat(events).noneMatch(e -> e.path("type").asText().equals("reminder.due"));
      gateway.server.clock.advance(java.time.Duration.ofHours(2));
      long deadline = System.currentTimeMillis() + 10_000;
      while (events.stream().noneMatch(e -> e.path("type").asText().equals("reminder.due"))
          && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      JsonNode event = events.stream()
          .filter(e -> e.path("type").asText().equals("reminder.due"))
          .findFirst()
          .orElseThrow();
      assertThat(event.at("/reminder/id").asText()).isEqualTo(reminder);
      assertThat(event.at("/reminder/text").asText()).isEqualTo("Call Ada");
      Thread.sleep(1500); // delivered once, not at every tick
      assertThat(events.stream().filter(e -> e.path("type").asText().equals("reminder.due")))
          .hasSize(1);
    } finally {
      hook.stop(0);
    }
  }

  @Test
  void tasksAreCreatedListedAndCompleted() {
    String assistant = assistant("{\"capabilities\":[\"answer_questions\",\"manage_tasks\"]}");
    chat(actor, assistant, "[call:manage_tasks {\"action\":\"create\",\"title\":\"Ship it\"}]", "");
    String task = lastToolResult().at("/result/task_id").asText();
    chat(actor, assistant, "[call:manage_tasks {\"action\":\"list\"}]", "");
    assertThat(lastToolResult().at("/result/open_tasks/0/title").asText()).isEqualTo("Ship it");
    chat(
        actor,
        assistant,
        "[call:manage_tasks {\"action\":\"complete\",\"task_id\":\"" + task + "\"}]",
        "");
    assertThat(lastToolResult().at("/result/status").asText()).isEqualTo("done");
    chat(actor, assistant, "[call:manage_tasks {\"action\":\"list\"}]", "");
    assertThat(lastToolResult().at("/result/open_tasks")).isEmpty();
  }

  @Test
  void anAgentsBoundaryBoundsWhatAHandlerReads() {
    String sales = gateway.remember("Sales: the Q3 discount code is AUTUMN.", "sales");
    String support = gateway.remember("Support: the Q3 escalation path is Tier 2.", "support");
    String assistant =
        assistant("{\"capabilities\":[\"answer_questions\",\"search_org_knowledge\"]}");
    Http.Response reply = gateway
        .server
        .http
        .post("/v1/agents/support/assistants/" + assistant + "/chat/completions")
        .bearer(actor)
        .json(GatewayFixture.body(
            "[call:search_org_knowledge {\"query\":\"Q3\"}]", "\"memory\":false"))
        .send();
    assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    List<String> found = new ArrayList<>();
    lastToolResult().at("/result/memories").forEach(m -> found.add(m.get("id").asText()));
    assertThat(found).contains(support).doesNotContain(sales);
  }

  @Test
  void aModelThatKeepsCallingIsStoppedAfterTheStepLimit() {
    String assistant = assistant("{\"capabilities\":[\"answer_questions\",\"manage_tasks\"]}");
    int before = gateway.upstream.requests().size();
    Http.Response reply = chat(actor, assistant, "[call*:manage_tasks {\"action\":\"list\"}]", "");
    assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    assertThat(reply.json().at("/choices/0/message/content").asText())
        .isEqualTo("Hello from the upstream.");
    // ENGRAM_ASSISTANT_MAX_TOOL_STEPS (5) rounds were carried out, then one step with no tools.
    assertThat(executions("assistant_id=" + assistant)).hasSize(5);
    assertThat(gateway.upstream.requests()).hasSize(before + 6);
    assertThat(gateway.upstream.lastRequest().get("tool_choice").asText()).isEqualTo("none");
  }

  @Test
  void theClientsOwnToolsStillGoBackToTheClient() {
    String assistant = assistant(ordersConfig(3, false));
    String tools = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
        + "\"parameters\":{\"type\":\"object\"}}}]";
    Http.Response reply = chat(actor, assistant, "Weather in Lyon?", tools);
    assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    JsonNode choice = reply.json().at("/choices/0");
    assertThat(choice.get("finish_reason").asText()).isEqualTo("tool_calls");
    assertThat(choice.at("/message/tool_calls/0/function/name").asText()).isEqualTo("get_weather");
    // The model was offered both: the client's tool, then the assistant's capabilities.
    JsonNode offered = gateway.upstream.lastRequest();
    assertThat(tool(offered, "get_weather")).isNotNull();
    assertThat(tool(offered, "create_orders")).isNotNull();
    // A client tool named like a capability would be ambiguous.
    Http.Response clash =
        chat(actor, assistant, "Hi", tools.replace("get_weather", "create_orders"));
    assertThat(clash.status()).isEqualTo(400);
    assertThat(clash.json().at("/error/param").asText()).isEqualTo("tools[0].function.name");
  }

  @Test
  void badBridgesAreRefusedNamingTheField() {
    String[][] cases = {
      {"{\"capability\":\"teleport\",\"url\":\"https://example.com\"}", "capability"},
      {"{\"capability\":\"search_org_knowledge\",\"url\":\"https://example.com\"}", "capability"},
      {"{\"capability\":\"answer_questions\",\"url\":\"https://example.com\"}", "capability"},
      {"{\"capability\":\"track_orders\",\"url\":\"ftp://example.com\"}", "url"},
      {"{\"capability\":\"track_orders\",\"url\":\"https://u:p@example.com\"}", "url"},
      {
        "{\"capability\":\"track_orders\",\"url\":\"https://example.com\",\"timeout_ms\":5}",
        "timeout_ms"
      },
      {"{\"capability\":\"track_orders\"}", "url"},
      {"{\"capability\":\"track_orders\",\"url\":\"https://example.com\",\"x\":1}", "x"},
    };
    for (String[] bad : cases) {
      Http.Response refused = gateway
          .server
          .http
          .post("/v1/organizations/" + gateway.orgId + "/action-bridges")
          .bearer(admin)
          .json(bad[0])
          .send();
      assertThat(refused.status()).as(bad[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
    Http.Response twice = gateway
        .server
        .http
        .post("/v1/organizations/" + gateway.orgId + "/action-bridges")
        .bearer(admin)
        .json("{\"capability\":\"create_orders\",\"url\":\"https://example.com\"}")
        .send();
    assertThat(twice.status()).isEqualTo(409);
    assertThat(gateway
            .server
            .http
            .get("/v1/organizations/" + gateway.orgId + "/capability-executions?status=done")
            .bearer(admin)
            .send()
            .status())
        .isEqualTo(400);
  }

  @Test
  void anotherOrganizationsAssistantAndExecutionsDoNotExist() {
    String assistant = assistant(ordersConfig(3, false));
    chat(actor, assistant, ORDER, "");
    String execution = lastToolResult().get("execution_id").asText();
    String other = gateway.server.createOrganization("growth");
    String stranger = gateway.server.token(other, null, "inference:chat", "actions:request");
    assertThat(chat(stranger, assistant, "Hi", "").status()).isEqualTo(404);
    String otherAdmin = gateway.server.apiKey(other, 1000, "admin");
    assertThat(gateway
            .server
            .http
            .post("/v1/organizations/" + gateway.orgId + "/capability-executions/" + execution
                + "/approve")
            .bearer(otherAdmin)
            .send()
            .status())
        .isEqualTo(404);
    assertThat(gateway
            .server
            .http
            .post("/v1/organizations/" + other + "/capability-executions/" + execution + "/approve")
            .bearer(otherAdmin)
            .send()
            .status())
        .isEqualTo(404);
  }

  @Test
  void executionsAreCountedInMetrics() {
    String assistant = assistant(ordersConfig(3, false));
    chat(actor, assistant, ORDER, "");
    String metrics =
        gateway.server.asOperator(gateway.server.http.get("/metrics")).text();
    assertThat(metrics)
        .contains(
            "engram_capability_executions_total{capability=\"create_orders\",status=\"executed\"}");
  }

  // ---- helpers

  private static String ordersConfig(int perDay, boolean approval) {
    return ActionFixtures.ordersConfig(perDay, approval);
  }

  private static String assistant(String capabilities) {
    return actions.assistant(capabilities);
  }

  private static void patch(String assistant, String json) {
    actions.patch(assistant, json);
  }

  private static Http.Response chat(
      String credential, String assistant, String content, String extra) {
    return gateway
        .server
        .http
        .post("/v1/assistants/" + assistant + "/chat/completions")
        .bearer(credential)
        .json(GatewayFixture.body(content, extra))
        .send();
  }

  private static JsonNode tool(JsonNode request, String name) {
    for (JsonNode tool : request.path("tools")) {
      if (tool.at("/function/name").asText().equals(name)) {
        return tool;
      }
    }
    return null;
  }

  /** What the model was told of the last capability call: the last tool message it got. */
  private static JsonNode lastToolResult() {
    JsonNode messages = gateway.upstream.lastRequest().get("messages");
    for (int i = messages.size() - 1; i >= 0; i--) {
      if (messages.get(i).path("role").asText().equals("tool")) {
        return Json.read(messages.get(i).get("content").asText(), JsonNode.class);
      }
    }
    throw new AssertionError("the model got no tool result: " + messages);
  }

  private static List<JsonNode> executions(String query) {
    Http.Response listed = gateway
        .server
        .http
        .get("/v1/organizations/" + gateway.orgId + "/capability-executions?" + query)
        .bearer(admin)
        .send();
    assertThat(listed.status()).as(listed.text()).isEqualTo(200);
    List<JsonNode> data = new ArrayList<>();
    listed.json().get("data").forEach(data::add);
    return data;
  }

  private static Http.Response decide(String credential, String execution, String decision) {
    return gateway
        .server
        .http
        .post("/v1/organizations/" + gateway.orgId + "/capability-executions/" + execution + "/"
            + decision)
        .bearer(credential)
        .send();
  }
}
