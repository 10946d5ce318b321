package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Bad requests get a 400 (or 404, 401, 403) in OpenAI's error shape and never reach the upstream. */
class InferenceValidationTest {
  @RegisterExtension
  static final GatewayFixture gateway = new GatewayFixture("free", Map.of());

  private static final String MESSAGES = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      model not a string       | {"model":5,MESSAGES}                                                   | model
      no messages              | {"model":"engram-chat"}                                                | messages
      empty messages           | {"model":"engram-chat","messages":[]}                                  | messages
      message not an object    | {"model":"engram-chat","messages":["Hi"]}                              | messages[0]
      bad role                 | {"model":"engram-chat","messages":[{"role":"robot","content":"Hi"}]}   | messages[0].role
      tool without its call    | {"model":"engram-chat","messages":[{"role":"tool","content":"Hi"}]}    | messages[0].tool_call_id
      function role            | {"model":"engram-chat","messages":[{"role":"function","content":"Hi"}]} | messages[0].role
      no content               | {"model":"engram-chat","messages":[{"role":"user"}]}                   | messages[0].content
      image part, no URL       | {"model":"engram-chat","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]} | messages[0].content[0].image_url.url
      audio part               | {"model":"engram-chat","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x"}}]}]} | messages[0].content[0]
      temperature too high     | {"model":"engram-chat",MESSAGES,"temperature":2.5}                     | temperature
      temperature as string    | {"model":"engram-chat",MESSAGES,"temperature":"0.5"}                   | temperature
      top_p above one          | {"model":"engram-chat",MESSAGES,"top_p":1.5}                           | top_p
      frequency penalty        | {"model":"engram-chat",MESSAGES,"frequency_penalty":-3}                | frequency_penalty
      presence penalty         | {"model":"engram-chat",MESSAGES,"presence_penalty":2.1}                | presence_penalty
      max_tokens zero          | {"model":"engram-chat",MESSAGES,"max_tokens":0}                        | max_tokens
      max_tokens over plan     | {"model":"engram-chat",MESSAGES,"max_tokens":1025}                     | max_tokens
      both max fields          | {"model":"engram-chat",MESSAGES,"max_tokens":5,"max_completion_tokens":5} | max_completion_tokens
      five stops               | {"model":"engram-chat",MESSAGES,"stop":["a","b","c","d","e"]}          | stop
      empty stop               | {"model":"engram-chat",MESSAGES,"stop":[""]}                           | stop
      n of zero                | {"model":"engram-chat",MESSAGES,"n":0}                                 | n
      n over 128               | {"model":"engram-chat",MESSAGES,"n":129}                               | n
      tools not an array       | {"model":"engram-chat",MESSAGES,"tools":{}}                            | tools
      logprobs not boolean     | {"model":"engram-chat",MESSAGES,"logprobs":1}                          | logprobs
      top_logprobs alone       | {"model":"engram-chat",MESSAGES,"top_logprobs":2}                      | top_logprobs
      top_logprobs over 20     | {"model":"engram-chat",MESSAGES,"logprobs":true,"top_logprobs":21}     | top_logprobs
      unknown format           | {"model":"engram-chat",MESSAGES,"response_format":{"type":"yaml"}}     | response_format
      logit bias out of range  | {"model":"engram-chat",MESSAGES,"logit_bias":{"50256":-101}}           | logit_bias
      logit bias not a token   | {"model":"engram-chat",MESSAGES,"logit_bias":{"the":5}}                | logit_bias
      stream options alone     | {"model":"engram-chat",MESSAGES,"stream_options":{"include_usage":true}} | stream_options
      unknown stream option    | {"model":"engram-chat",MESSAGES,"stream":true,"stream_options":{"x":1}} | stream_options
      stream not boolean       | {"model":"engram-chat",MESSAGES,"stream":"yes"}                        | stream
      seed not integer         | {"model":"engram-chat",MESSAGES,"seed":1.5}                            | seed
      memory not boolean       | {"model":"engram-chat",MESSAGES,"memory":"off"}                        | memory
      memory limit             | {"model":"engram-chat",MESSAGES,"memory":{"limit":0}}                  | memory.limit
      memory unknown option    | {"model":"engram-chat",MESSAGES,"memory":{"depth":3}}                  | memory.depth
      """)
  void refusesWithAClearInvalidRequestError(String name, String json, String param) {
    // (Without "model", DEFAULT_MODEL applies: OrganizationVariablesEnforcementTest.)
    int before = gateway.upstream.requests().size();
    Http.Response response =
        gateway.chat(gateway.token, json.replace("MESSAGES", MESSAGES)).send();
    assertThat(response.status()).as(response.text()).isEqualTo(400);
    assertThat(response.json().get("error").get("type").asText())
        .isEqualTo("invalid_request_error");
    assertThat(response.json().get("error").get("param").asText()).isEqualTo(param);
    assertThat(response.json().get("error").get("message").asText()).isNotBlank();
    assertThat(gateway.upstream.requests()).hasSize(before);
  }

  @ParameterizedTest(name = "completions: {0}")
  @CsvSource(delimiter = '|', textBlock = """
      no prompt           | {"model":"engram-chat"}                                   | prompt
      empty prompt        | {"model":"engram-chat","prompt":""}                       | prompt
      two prompts         | {"model":"engram-chat","prompt":["a","b"]}                | prompt
      token prompt        | {"model":"engram-chat","prompt":[1,2,3]}                  | prompt
      n of two            | {"model":"engram-chat","prompt":"a","n":2}                | n
      best_of             | {"model":"engram-chat","prompt":"a","best_of":3}          | best_of
      echo                | {"model":"engram-chat","prompt":"a","echo":true}          | echo
      logprobs            | {"model":"engram-chat","prompt":"a","logprobs":5}         | logprobs
      suffix              | {"model":"engram-chat","prompt":"a","suffix":"z"}         | suffix
      temperature         | {"model":"engram-chat","prompt":"a","temperature":-1}     | temperature
      """)
  void completionsRefuseWithAClearInvalidRequestError(String name, String json, String param) {
    Http.Response response = gateway
        .server
        .http
        .post("/v1/completions")
        .bearer(gateway.key)
        .json(json)
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(400);
    assertThat(response.json().get("error").get("type").asText())
        .isEqualTo("invalid_request_error");
    assertThat(response.json().get("error").get("param").asText()).isEqualTo(param);
  }

  @Test
  void acceptsWhatOpenAiClientsSendAtTheirDefaults() {
    Http.Response ok = gateway
        .chat(
            gateway.token,
            "{\"model\":\"engram-chat\",\"n\":1,\"logprobs\":false,"
                + "\"store\":false,\"logit_bias\":{},\"response_format\":{\"type\":\"text\"},\"user\":\"someone\","
                + "\"seed\":42,\"max_completion_tokens\":100,\"stream\":false,\"memory\":false,"
                + "\"messages\":[{\"role\":\"developer\",\"content\":\"Be brief\"},{\"role\":\"user\",\"content\":"
                + "[{\"type\":\"text\",\"text\":\"Hi \"},{\"type\":\"text\",\"text\":\"there\"}],\"name\":\"ann\"}]}")
        .send();
    assertThat(ok.status()).as(ok.text()).isEqualTo(200);
    var sent = gateway.upstream.lastRequest();
    assertThat(sent.get("messages").get(0).get("role").asText()).isEqualTo("system");
    assertThat(sent.get("messages").get(1).get("content").asText()).isEqualTo("Hi there");
    assertThat(sent.get("max_completion_tokens").asInt()).isEqualTo(100);
    assertThat(sent.has("max_tokens")).isFalse();
  }

  @Test
  void defaultMaxTokensStaysWithinTheFreePlansTokensPerRequest() {
    gateway.chat(gateway.token, GatewayFixture.body("Hi", "")).send();
    assertThat(gateway.upstream.lastRequest().get("max_tokens").asInt()).isEqualTo(1024);
  }

  @Test
  void anUnknownModelIsA404InOpenAisWords() {
    Http.Response response =
        gateway.chat(gateway.token, "{\"model\":\"gpt-9\"," + MESSAGES + "}").send();
    assertThat(response.status()).isEqualTo(404);
    assertThat(response.json().get("error").get("code").asText()).isEqualTo("model_not_found");
    assertThat(response.json().get("error").get("param").asText()).isEqualTo("model");
  }

  @Test
  void malformedBodiesAndMemoryHeadersAre400s() {
    assertThat(gateway.chat(gateway.token, "{\"model\":").send().status()).isEqualTo(400);
    assertThat(gateway
            .server
            .http
            .post("/v1/chat/completions")
            .bearer(gateway.token)
            .body("text/plain", "hi")
            .send()
            .status())
        .isEqualTo(415);
    Http.Response header = gateway
        .chat(gateway.token, GatewayFixture.body("Hi", ""))
        .header("X-Engram-Memory", "maybe")
        .send();
    assertThat(header.status()).isEqualTo(400);
    assertThat(header.json().get("error").get("param").asText()).isEqualTo("X-Engram-Memory");
    Http.Response agent = gateway
        .server
        .http
        .post("/v1/agents/Not%20A%20Slug/chat/completions")
        .bearer(gateway.token)
        .json(GatewayFixture.body("Hi", ""))
        .send();
    assertThat(agent.status()).isEqualTo(400);
  }

  @Test
  void credentialsNeedInferenceChatOrTheInferencePermission() {
    Http.Response none = gateway
        .server
        .http
        .post("/v1/chat/completions")
        .json(GatewayFixture.body("Hi", ""))
        .send();
    assertThat(none.status()).isEqualTo(401);
    assertThat(none.json().get("error").get("type").asText()).isEqualTo("authentication_error");
    Http.Response bad = gateway
        .chat("engk_not-a-real-key-at-all-000000000000", GatewayFixture.body("Hi", ""))
        .send();
    assertThat(bad.status()).isEqualTo(401);
    assertThat(bad.json().get("error").get("code").asText()).isEqualTo("invalid_api_key");

    String memoryOnly = gateway.server.token(gateway.orgId, null, "memory:read");
    Http.Response noScope =
        gateway.chat(memoryOnly, GatewayFixture.body("Hi", "")).send();
    assertThat(noScope.status()).isEqualTo(403);
    assertThat(noScope.json().get("error").get("type").asText()).isEqualTo("authorization_error");

    String modelsKey = gateway.server.apiKey(gateway.orgId, 100, "models");
    assertThat(gateway.chat(modelsKey, GatewayFixture.body("Hi", "")).send().status())
        .isEqualTo(403);
    String adminKey = gateway.server.apiKey(gateway.orgId, 100, "admin");
    assertThat(gateway.chat(adminKey, GatewayFixture.body("Hi", "")).send().status())
        .isEqualTo(200);
    Http.Response operator = gateway
        .chat(io.engram.support.TestServer.ADMIN_KEY, GatewayFixture.body("Hi", ""))
        .send();
    assertThat(operator.status()).isEqualTo(403);
    // Text completions take what chat takes: a context token with inference:chat (as
    // docs/auth.md says), not one without it.
    Http.Response tokenCompletion = gateway
        .server
        .http
        .post("/v1/completions")
        .bearer(gateway.token)
        .json("{\"model\":\"engram-chat\",\"prompt\":\"x\",\"max_tokens\":4}")
        .send();
    assertThat(tokenCompletion.status()).as(tokenCompletion.text()).isEqualTo(200);
    Http.Response refused = gateway
        .server
        .http
        .post("/v1/completions")
        .bearer(memoryOnly)
        .json("{\"model\":\"engram-chat\",\"prompt\":\"x\",\"max_tokens\":4}")
        .send();
    assertThat(refused.status()).isEqualTo(403);
  }
}
