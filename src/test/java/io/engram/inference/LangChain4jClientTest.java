package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** LangChain4j's OpenAI chat models, unchanged but for the base URL and key, against the gateway. */
class LangChain4jClientTest {
  @RegisterExtension
  static final GatewayFixture gateway = GatewayFixture.start();

  private static String baseUrl() {
    return "http://127.0.0.1:" + gateway.server.engram.port() + "/v1";
  }

  @Test
  void aChatAndAStreamedChatGoThroughTheGateway() throws Exception {
    OpenAiChatModel model = OpenAiChatModel.builder()
        .baseUrl(baseUrl())
        .apiKey(gateway.token)
        .modelName(GatewayFixture.MODEL)
        .maxRetries(0)
        .build();
    assertThat(model.chat("Hello")).isEqualTo("Hello from the upstream.");

    OpenAiStreamingChatModel streaming = OpenAiStreamingChatModel.builder()
        .baseUrl(baseUrl())
        .apiKey(gateway.token)
        .modelName(GatewayFixture.MODEL)
        .build();
    StringBuilder pieces = new StringBuilder();
    CompletableFuture<ChatResponse> done = new CompletableFuture<>();
    streaming.chat("Hello", new StreamingChatResponseHandler() {
      @Override
      public void onPartialResponse(String partial) {
        pieces.append(partial);
      }

      @Override
      public void onCompleteResponse(ChatResponse response) {
        done.complete(response);
      }

      @Override
      public void onError(Throwable error) {
        done.completeExceptionally(error);
      }
    });
    ChatResponse response = done.get(30, TimeUnit.SECONDS);
    assertThat(pieces.toString()).isEqualTo("Hello from the upstream.");
    assertThat(response.aiMessage().text()).isEqualTo("Hello from the upstream.");
  }
}
