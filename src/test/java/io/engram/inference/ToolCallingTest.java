package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.WebSocketClient;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What agent frameworks send: tools, tool_choice, parallel_tool_calls, response_format and tool
 * messages reach the upstream as sent, and the model's tool calls come back in OpenAI's exact
 * shapes, whole and streamed (deltas included). Never silently dropped.
 */
class ToolCallingTest {
  @RegisterExtension
  static final GatewayFixture gateway = GatewayFixture.start();

  private static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"function\":{"
      + "\"name\":\"get_weather\",\"description\":\"The weather in a city\",\"parameters\":{"
      + "\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}]";

  private static String body(String messages, String extra) {
    return "{\"model\":\"" + GatewayFixture.MODEL + "\",\"messages\":" + messages
        + ",\"memory\":false," + extra + "}";
  }

  private static final String ASK = "[{\"role\":\"user\",\"content\":\"Weather in Lyon?\"}]";

  @Test
  void aToolCallComesBackWholeAndTheToolsReachTheUpstreamAsSent() {
    Http.Response response = gateway
        .chat(
            gateway.token,
            body(ASK, TOOLS + ",\"tool_choice\":\"auto\",\"parallel_tool_calls\":false"))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode choice = response.json().at("/choices/0");
    assertThat(choice.get("finish_reason").asText()).isEqualTo("tool_calls");
    assertThat(choice.at("/message/content").isNull()).isTrue();
    JsonNode call = choice.at("/message/tool_calls/0");
    assertThat(call.get("id").asText()).isEqualTo("call_1");
    assertThat(call.at("/function/name").asText()).isEqualTo("get_weather");
    assertThat(Json.read(call.at("/function/arguments").asText(), JsonNode.class)
            .get("city")
            .asText())
        .isEqualTo("Lyon");
    JsonNode sent = gateway.upstream.lastRequest();
    assertThat(sent.at("/tools/0/function/name").asText()).isEqualTo("get_weather");
    assertThat(sent.get("tool_choice").asText()).isEqualTo("auto");
    assertThat(sent.get("parallel_tool_calls").asBoolean()).isFalse();
  }

  @Test
  void theToolsAnswerGoesBackToTheModelInTheConversation() {
    String conversation = "[{\"role\":\"user\",\"content\":\"Weather in Lyon?\"},"
        + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\","
        + "\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
        + "\"arguments\":\"{\\\"city\\\":\\\"Lyon\\\"}\"}}]},"
        + "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"Sunny, 21 C\"}]";
    Http.Response response =
        gateway.chat(gateway.token, body(conversation, TOOLS)).send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    assertThat(response.json().at("/choices/0/message/content").asText())
        .isEqualTo("Hello from the upstream.");
    JsonNode sent = gateway.upstream.lastRequest().get("messages");
    assertThat(sent.get(1).at("/tool_calls/0/id").asText()).isEqualTo("call_1");
    assertThat(sent.get(1).get("content").isNull()).isTrue();
    assertThat(sent.get(2).get("role").asText()).isEqualTo("tool");
    assertThat(sent.get(2).get("tool_call_id").asText()).isEqualTo("call_1");
  }

  @Test
  void toolCallDeltasAreStreamedInOpenAisShape() {
    Http.Response response =
        gateway.chat(gateway.token, body(ASK, TOOLS + ",\"stream\":true")).send();
    assertThat(response.status()).isEqualTo(200);
    List<String> events = GatewayFixture.events(response.text());
    assertThat(events.getLast()).isEqualTo("[DONE]");
    StringBuilder arguments = new StringBuilder();
    String name = null;
    String finish = null;
    for (String event : events.subList(0, events.size() - 1)) {
      JsonNode choice = Json.read(event, JsonNode.class).at("/choices/0");
      JsonNode call = choice.at("/delta/tool_calls/0");
      if (!call.isMissingNode()) {
        assertThat(call.get("index").asInt()).isZero();
        if (call.has("id")) {
          name = call.at("/function/name").asText();
        }
        arguments.append(call.at("/function/arguments").asText(""));
      }
      if (choice.hasNonNull("finish_reason")) {
        finish = choice.get("finish_reason").asText();
      }
    }
    assertThat(name).isEqualTo("get_weather");
    assertThat(arguments.toString()).isEqualTo("{\"city\":\"Lyon\"}");
    assertThat(finish).isEqualTo("tool_calls");
    assertThat(Json.read(events.getFirst(), JsonNode.class)
            .at("/choices/0/delta/role")
            .asText())
        .isEqualTo("assistant");
  }

  @Test
  void structuredOutputIsPassedThrough() {
    String format = "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":"
        + "\"weather\",\"schema\":{\"type\":\"object\"},\"strict\":true}}";
    Http.Response response = gateway.chat(gateway.token, body(ASK, format)).send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    assertThat(gateway
            .upstream
            .lastRequest()
            .at("/response_format/json_schema/name")
            .asText())
        .isEqualTo("weather");
    gateway
        .chat(gateway.token, body(ASK, "\"response_format\":{\"type\":\"json_object\"}"))
        .send();
    assertThat(gateway.upstream.lastRequest().at("/response_format/type").asText())
        .isEqualTo("json_object");
  }

  @Test
  void malformedToolingIsRefusedNamingTheField() {
    String[][] cases = {
      {body(ASK, "\"tools\":{}"), "tools"},
      {body(ASK, "\"tools\":[{\"type\":\"retrieval\"}]"), "tools[0]"},
      {
        body(ASK, "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"bad name\"}}]"),
        "tools[0].function.name"
      },
      {body(ASK, "\"tool_choice\":\"auto\""), "tool_choice"},
      {body(ASK, TOOLS + ",\"tool_choice\":\"sometimes\""), "tool_choice"},
      {body(ASK, "\"parallel_tool_calls\":\"yes\""), "parallel_tool_calls"},
      {body(ASK, "\"response_format\":{\"type\":\"xml\"}"), "response_format"},
      {body("[{\"role\":\"tool\",\"content\":\"x\"}]", TOOLS), "messages[0].tool_call_id"},
      {
        body("[{\"role\":\"user\",\"content\":\"x\",\"tool_calls\":[]}]", TOOLS),
        "messages[0].tool_calls"
      },
    };
    int before = gateway.upstream.requests().size();
    for (String[] bad : cases) {
      Http.Response refused = gateway.chat(gateway.token, bad[0]).send();
      assertThat(refused.status()).as(bad[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
    assertThat(gateway.upstream.requests()).hasSize(before);
  }

  @Test
  void webSocketsRefuseToolsRatherThanDropThem() throws Exception {
    try (WebSocketClient client = new WebSocketClient(gateway.server.engram.port(), "/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"" + gateway.token + "\"}");
      assertThat(client.next().get("type").asText()).isEqualTo("auth_ok");
      client.send(body(ASK, TOOLS).replaceFirst("\\{", "{\"type\":\"inference\","));
      JsonNode error = client.next();
      assertThat(error.at("/error/code").asText()).isEqualTo("unsupported_parameter");
      assertThat(error.at("/error/param").asText()).isEqualTo("tools");
    }
  }
}
