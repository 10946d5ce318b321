package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** POST /v1/responses: whole and streamed, conversation state, memory, and what it refuses. */
class ResponsesApiTest {
  @RegisterExtension
  static final GatewayFixture gateway = GatewayFixture.start();

  private static Http.Response create(String json) {
    return gateway
        .server
        .http
        .post("/v1/responses")
        .bearer(gateway.token)
        .json(json)
        .send();
  }

  @Test
  void aTextInputGetsAResponseWithOneOutputMessageAndUsage() {
    Http.Response response = create("{\"model\":\"" + GatewayFixture.MODEL
        + "\",\"input\":\"Hello\",\"instructions\":\"Be brief.\",\"memory\":false}");
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode body = response.json();
    assertThat(body.get("object").asText()).isEqualTo("response");
    assertThat(body.get("id").asText()).startsWith("resp_");
    assertThat(body.get("status").asText()).isEqualTo("completed");
    assertThat(body.at("/output/0/type").asText()).isEqualTo("message");
    assertThat(body.at("/output/0/content/0/type").asText()).isEqualTo("output_text");
    assertThat(body.at("/output/0/content/0/text").asText()).isEqualTo("Hello from the upstream.");
    assertThat(body.at("/usage/output_tokens").asInt()).isEqualTo(5);
    JsonNode sent = gateway.upstream.lastRequest().get("messages");
    assertThat(sent.get(0).get("role").asText()).isEqualTo("system");
    assertThat(sent.get(0).get("content").asText()).isEqualTo("Be brief.");
    assertThat(sent.get(1).get("content").asText()).isEqualTo("Hello");
  }

  @Test
  void previousResponseIdContinuesTheConversationWithoutItsInstructions() {
    String first = create("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
            + "\"text\":\"My name is Ada\"}]}],\"instructions\":\"Be brief.\",\"memory\":false}")
        .json()
        .get("id")
        .asText();
    Http.Response second = create("{\"input\":\"What is my name?\",\"previous_response_id\":\""
        + first + "\",\"memory\":false}");
    assertThat(second.status()).as(second.text()).isEqualTo(200);
    assertThat(second.json().get("previous_response_id").asText()).isEqualTo(first);
    List<String> roles = new ArrayList<>();
    List<String> contents = new ArrayList<>();
    gateway.upstream.lastRequest().get("messages").forEach(m -> {
      roles.add(m.get("role").asText());
      contents.add(m.get("content").asText());
    });
    assertThat(roles).containsExactly("user", "assistant", "user");
    assertThat(contents)
        .containsExactly("My name is Ada", "Hello from the upstream.", "What is my name?");

    Http.Response stored =
        gateway.server.http.get("/v1/responses/" + first).bearer(gateway.token).send();
    assertThat(stored.status()).isEqualTo(200);
    assertThat(stored.json().get("id").asText()).isEqualTo(first);

    // Another organization's response does not exist for this one.
    String otherOrg = gateway.server.createOrganization("seed");
    String stranger = gateway.server.token(otherOrg, null, "inference:chat");
    assertThat(gateway
            .server
            .http
            .get("/v1/responses/" + first)
            .bearer(stranger)
            .send()
            .status())
        .isEqualTo(404);
    Http.Response chained = gateway
        .server
        .http
        .post("/v1/responses")
        .bearer(stranger)
        .json("{\"input\":\"hi\",\"previous_response_id\":\"" + first + "\"}")
        .send();
    assertThat(chained.status()).isEqualTo(404);
    assertThat(chained.json().at("/error/param").asText()).isEqualTo("previous_response_id");

    assertThat(gateway
            .server
            .http
            .delete("/v1/responses/" + first)
            .bearer(gateway.token)
            .send()
            .json()
            .get("deleted")
            .asBoolean())
        .isTrue();
    assertThat(gateway
            .server
            .http
            .get("/v1/responses/" + first)
            .bearer(gateway.token)
            .send()
            .status())
        .isEqualTo(404);
  }

  @Test
  void aStreamIsTheTypedEventsInOrder() {
    Http.Response response = create("{\"input\":\"Hello\",\"stream\":true,\"memory\":false}");
    assertThat(response.status()).isEqualTo(200);
    List<String> names = new ArrayList<>();
    List<JsonNode> events = new ArrayList<>();
    for (String line : response.text().split("\n")) {
      if (line.startsWith("event: ")) {
        names.add(line.substring(7));
      } else if (line.startsWith("data: ")) {
        events.add(Json.read(line.substring(6), JsonNode.class));
      }
    }
    assertThat(names.subList(0, 4))
        .containsExactly(
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added");
    assertThat(names.subList(names.size() - 4, names.size()))
        .containsExactly(
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed");
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < events.size(); i++) {
      assertThat(events.get(i).get("sequence_number").asInt()).isEqualTo(i);
      assertThat(events.get(i).get("type").asText()).isEqualTo(names.get(i));
      if (names.get(i).equals("response.output_text.delta")) {
        text.append(events.get(i).get("delta").asText());
      }
    }
    assertThat(text.toString()).isEqualTo("Hello from the upstream.");
    JsonNode completed = events.getLast().get("response");
    assertThat(completed.get("status").asText()).isEqualTo("completed");
    assertThat(completed.at("/usage/total_tokens").asInt()).isPositive();
  }

  @Test
  void storedResponsesAreKeptThirtyDays() {
    String id =
        create("{\"input\":\"Hello\",\"memory\":false}").json().get("id").asText();
    java.time.Instant now = gateway.server.clock.instant();
    gateway.server.engram.inference().purgeOldResponses(now.plus(java.time.Duration.ofDays(29)));
    assertThat(gateway
            .server
            .http
            .get("/v1/responses/" + id)
            .bearer(gateway.token)
            .send()
            .status())
        .isEqualTo(200);
    gateway.server.engram.inference().purgeOldResponses(now.plus(java.time.Duration.ofDays(31)));
    assertThat(gateway
            .server
            .http
            .get("/v1/responses/" + id)
            .bearer(gateway.token)
            .send()
            .status())
        .isEqualTo(404);
  }

  @Test
  void memoryIsInjectedAsInChat() {
    String id = gateway.remember("The Lyon warehouse closes at six on Fridays.", null);
    Http.Response response = create("{\"input\":\"When does the Lyon warehouse close?\"}");
    assertThat(response.header("X-Engram-Memory-Ids")).contains(id);
    assertThat(gateway.upstream.lastRequest().at("/messages/0/content").asText())
        .contains("six on Fridays");
  }

  private static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"name\":"
      + "\"get_weather\",\"description\":\"The weather in a city\",\"parameters\":{"
      + "\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}]";

  @Test
  void aFunctionCallIsAnOutputItemAndItsOutputContinuesTheConversation() {
    Http.Response called = create("{\"input\":\"Weather in Lyon?\",\"memory\":false," + TOOLS
        + ",\"tool_choice\":{\"type\":\"function\",\"name\":\"get_weather\"}}");
    assertThat(called.status()).as(called.text()).isEqualTo(200);
    JsonNode body = called.json();
    assertThat(body.get("output")).hasSize(1);
    JsonNode call = body.at("/output/0");
    assertThat(call.get("type").asText()).isEqualTo("function_call");
    assertThat(call.get("call_id").asText()).isEqualTo("call_1");
    assertThat(call.get("name").asText()).isEqualTo("get_weather");
    assertThat(call.get("status").asText()).isEqualTo("completed");
    assertThat(Json.read(call.get("arguments").asText(), JsonNode.class)
            .get("city")
            .asText())
        .isEqualTo("Lyon");
    assertThat(body.at("/tools/0/name").asText()).isEqualTo("get_weather");
    // The upstream got the chat's form of the tools and of the forced choice.
    JsonNode sent = gateway.upstream.lastRequest();
    assertThat(sent.at("/tools/0/function/name").asText()).isEqualTo("get_weather");
    assertThat(sent.at("/tools/0/function/parameters/type").asText()).isEqualTo("object");
    assertThat(sent.at("/tool_choice/function/name").asText()).isEqualTo("get_weather");

    // The caller runs the function and answers the stored call by its id.
    Http.Response answered =
        create("{\"previous_response_id\":\"" + body.get("id").asText()
            + "\",\"memory\":false," + TOOLS + ",\"input\":[{\"type\":\"function_call_output\","
            + "\"call_id\":\"call_1\",\"output\":\"Sunny, 21 C\"}]}");
    assertThat(answered.status()).as(answered.text()).isEqualTo(200);
    assertThat(answered.json().at("/output/0/content/0/text").asText())
        .isEqualTo("Hello from the upstream.");
    JsonNode messages = gateway.upstream.lastRequest().get("messages");
    assertThat(messages.get(1).get("role").asText()).isEqualTo("assistant");
    assertThat(messages.get(1).at("/tool_calls/0/id").asText()).isEqualTo("call_1");
    assertThat(messages.get(1).at("/tool_calls/0/function/name").asText()).isEqualTo("get_weather");
    assertThat(messages.get(2).get("role").asText()).isEqualTo("tool");
    assertThat(messages.get(2).get("tool_call_id").asText()).isEqualTo("call_1");
    assertThat(messages.get(2).get("content").asText()).isEqualTo("Sunny, 21 C");
  }

  @Test
  void callsSentBackAsInputItemsAreOneAssistantTurn() {
    Http.Response answered = create("{\"memory\":false," + TOOLS + ",\"input\":["
        + "{\"role\":\"user\",\"content\":\"Weather in Lyon and Paris?\"},"
        + "{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":\"get_weather\","
        + "\"arguments\":\"{}\"},"
        + "{\"type\":\"function_call\",\"call_id\":\"b\",\"name\":\"get_weather\","
        + "\"arguments\":\"{}\"},"
        + "{\"type\":\"function_call_output\",\"call_id\":\"a\",\"output\":\"Sunny\"},"
        + "{\"type\":\"function_call_output\",\"call_id\":\"b\",\"output\":\"Rain\"}]}");
    assertThat(answered.status()).as(answered.text()).isEqualTo(200);
    JsonNode messages = gateway.upstream.lastRequest().get("messages");
    assertThat(messages).hasSize(4);
    assertThat(messages.get(1).get("tool_calls")).hasSize(2);
    assertThat(messages.get(3).get("tool_call_id").asText()).isEqualTo("b");
  }

  @Test
  void aStreamedFunctionCallIsAddedThenItsArgumentsStreamThenDone() {
    Http.Response response =
        create("{\"input\":\"Weather in Lyon?\",\"stream\":true,\"memory\":false," + TOOLS + "}");
    assertThat(response.status()).isEqualTo(200);
    List<JsonNode> events = new ArrayList<>();
    for (String line : response.text().split("\n")) {
      if (line.startsWith("data: ")) {
        events.add(Json.read(line.substring(6), JsonNode.class));
      }
    }
    List<String> types = events.stream().map(e -> e.get("type").asText()).toList();
    assertThat(types)
        .startsWith("response.created", "response.in_progress", "response.output_item.added")
        .endsWith(
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed")
        .contains("response.function_call_arguments.delta")
        .doesNotContain("response.output_text.delta");
    JsonNode added = events.get(2);
    assertThat(added.get("output_index").asInt()).isZero();
    assertThat(added.at("/item/type").asText()).isEqualTo("function_call");
    assertThat(added.at("/item/name").asText()).isEqualTo("get_weather");
    StringBuilder arguments = new StringBuilder();
    events.stream()
        .filter(e -> e.get("type").asText().equals("response.function_call_arguments.delta"))
        .forEach(e -> arguments.append(e.get("delta").asText()));
    assertThat(Json.read(arguments.toString(), JsonNode.class).get("city").asText())
        .isEqualTo("Lyon");
    JsonNode completed = events.getLast().get("response");
    assertThat(completed.get("output")).hasSize(1);
    assertThat(completed.at("/output/0/arguments").asText()).isEqualTo(arguments.toString());
  }

  @Test
  void aJsonFormatReachesTheUpstreamAsTheChatsResponseFormat() {
    Http.Response response = create("{\"input\":\"Weather?\",\"memory\":false,\"text\":{"
        + "\"format\":{\"type\":\"json_schema\",\"name\":\"weather\",\"strict\":true,"
        + "\"schema\":{\"type\":\"object\"}}}}");
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode sent = gateway.upstream.lastRequest().get("response_format");
    assertThat(sent.get("type").asText()).isEqualTo("json_schema");
    assertThat(sent.at("/json_schema/name").asText()).isEqualTo("weather");
    assertThat(sent.at("/json_schema/strict").asBoolean()).isTrue();
    assertThat(sent.at("/json_schema/schema/type").asText()).isEqualTo("object");
    assertThat(response.json().at("/text/format/type").asText()).isEqualTo("json_schema");
    assertThat(response.json().at("/text/format/name").asText()).isEqualTo("weather");

    create("{\"input\":\"Hi\",\"memory\":false,\"text\":{\"format\":{\"type\":\"json_object\"}}}");
    assertThat(gateway.upstream.lastRequest().at("/response_format/type").asText())
        .isEqualTo("json_object");
  }

  @Test
  void whatThisRouteDoesNotCarryIsRefusedByName() {
    String[][] cases = {
      {"{\"input\":\"hi\",\"tools\":[{\"type\":\"web_search\"}]}", "tools[0]"},
      {"{\"input\":\"hi\",\"tools\":{\"type\":\"function\"}}", "tools"},
      {"{\"input\":\"hi\",\"tool_choice\":\"required\"}", "tool_choice"},
      {"{\"input\":\"hi\",\"reasoning\":{\"summary\":\"auto\"}}", "reasoning.summary"},
      {
        "{\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"x\",\"output\":7}]}",
        "input[0]"
      },
      {"{\"input\":[{\"type\":\"file_search_call\",\"id\":\"x\"}]}", "input[0]"},
      {"{\"input\":[{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}]}", "input[0]"
      },
      {"{\"input\":\"\"}", "input"},
      {"{}", "input"},
      {"{\"input\":\"hi\",\"text\":{\"format\":{\"type\":\"yaml\"}}}", "text.format"},
      {"{\"input\":\"hi\",\"text\":{\"format\":{\"type\":\"json_schema\"}}}", "text.format"},
      {"{\"input\":\"hi\",\"text\":\"json\"}", "text"},
      {"{\"input\":\"hi\",\"temperature\":3}", "temperature"},
    };
    for (String[] bad : cases) {
      Http.Response refused = create(bad[0]);
      assertThat(refused.status()).as(bad[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
  }
}
