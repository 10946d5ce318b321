package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** /v1/embeddings with the real MiniLM model, and the model routes on both surfaces. */
class EmbeddingAndModelTest {
  @RegisterExtension
  static final GatewayFixture gateway = GatewayFixture.start();

  private Http.Response embed(String json) {
    return gateway
        .server
        .http
        .post("/v1/embeddings")
        .bearer(gateway.key)
        .json(json)
        .send();
  }

  @Test
  void embedsOneStringOrManyInOpenAisShape() {
    Http.Response single =
        embed("{\"model\":\"all-minilm-l6-v2\",\"input\":\"The cat sat on the mat\"}");
    assertThat(single.status()).as(single.text()).isEqualTo(200);
    JsonNode body = single.json();
    assertThat(body.get("object").asText()).isEqualTo("list");
    assertThat(body.get("model").asText()).isEqualTo("all-minilm-l6-v2");
    assertThat(body.get("data")).hasSize(1);
    JsonNode item = body.get("data").get(0);
    assertThat(item.get("object").asText()).isEqualTo("embedding");
    assertThat(item.get("index").asInt()).isZero();
    assertThat(item.get("embedding")).hasSize(384);
    assertThat(norm(floats(item.get("embedding"))))
        .isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-3));
    assertThat(body.get("usage").get("prompt_tokens").asInt()).isPositive();
    assertThat(body.get("usage").get("total_tokens").asInt())
        .isEqualTo(body.get("usage").get("prompt_tokens").asInt());

    Http.Response batch =
        embed("{\"model\":\"all-minilm-l6-v2\",\"input\":[\"The cat sat on the mat\","
            + "\"A feline rested on the rug\",\"Quarterly revenue grew 8 percent\"]}");
    JsonNode data = batch.json().get("data");
    assertThat(data).hasSize(3);
    float[] cat = floats(data.get(0).get("embedding"));
    assertThat(cat)
        .containsExactly(floats(item.get("embedding")), org.assertj.core.data.Offset.offset(1e-5f));
    double similar = dot(cat, floats(data.get(1).get("embedding")));
    double unrelated = dot(cat, floats(data.get(2).get("embedding")));
    assertThat(similar).isGreaterThan(unrelated);
    assertThat(data.get(2).get("index").asInt()).isEqualTo(2);
  }

  @Test
  void base64EncodingIsLittleEndianFloat32AsOpenAisNodeClientReadsIt() {
    JsonNode floatsItem = embed("{\"model\":\"all-minilm-l6-v2\",\"input\":\"hello\"}")
        .json()
        .get("data")
        .get(0);
    JsonNode base64Item = embed(
            "{\"model\":\"all-minilm-l6-v2\",\"input\":\"hello\",\"encoding_format\":\"base64\"}")
        .json()
        .get("data")
        .get(0);
    ByteBuffer bytes = ByteBuffer.wrap(
            Base64.getDecoder().decode(base64Item.get("embedding").asText()))
        .order(ByteOrder.LITTLE_ENDIAN);
    float[] decoded = new float[bytes.remaining() / 4];
    bytes.asFloatBuffer().get(decoded);
    assertThat(decoded)
        .containsExactly(
            floats(floatsItem.get("embedding")), org.assertj.core.data.Offset.offset(1e-6f));
  }

  @Test
  void badEmbeddingRequestsAre400sAndATokenEmbeds() {
    for (String json : List.of(
        "{\"input\":\"x\"}",
        "{\"model\":\"all-minilm-l6-v2\"}",
        "{\"model\":\"all-minilm-l6-v2\",\"input\":[]}",
        "{\"model\":\"all-minilm-l6-v2\",\"input\":\"\"}",
        "{\"model\":\"all-minilm-l6-v2\",\"input\":[1,2,3]}",
        "{\"model\":\"all-minilm-l6-v2\",\"input\":5}",
        "{\"model\":\"all-minilm-l6-v2\",\"input\":\"x\",\"encoding_format\":\"int8\"}",
        "{\"model\":\"all-minilm-l6-v2\",\"input\":\"x\",\"dimensions\":128}",
        "{\"model\":\"all-minilm-l6-v2\",\"input\":\"x\",\"extra\":1}")) {
      Http.Response response = embed(json);
      assertThat(response.status()).as(json + " -> " + response.text()).isEqualTo(400);
      assertThat(response.json().get("error").get("type").asText())
          .isEqualTo("invalid_request_error");
    }
    assertThat(embed("{\"model\":\"text-embedding-3-small\",\"input\":\"x\"}").status())
        .isEqualTo(404);
    Http.Response token = gateway
        .server
        .http
        .post("/v1/embeddings")
        .bearer(gateway.token)
        .json("{\"model\":\"all-minilm-l6-v2\",\"input\":\"x\"}")
        .send();
    // A context token embeds too: one credential both chats and searches.
    assertThat(token.status()).as(token.text()).isEqualTo(200);
  }

  @Test
  void aTokenSeesWhatItMayCallAndAKeySeesEveryModelWithItsParameters() {
    Http.Response forToken =
        gateway.server.http.get("/v1/models").bearer(gateway.token).send();
    assertThat(forToken.status()).isEqualTo(200);
    assertThat(forToken.json().get("object").asText()).isEqualTo("list");
    // Exactly what a token may call: the advertised model, and the embedding model it embeds with.
    assertThat(forToken.json().get("data")).hasSize(2);
    assertThat(forToken.json().at("/data/1/id").asText()).isEqualTo("all-minilm-l6-v2");
    JsonNode model = forToken.json().get("data").get(0);
    assertThat(model.get("id").asText()).isEqualTo(GatewayFixture.MODEL);
    assertThat(model.get("object").asText()).isEqualTo("model");
    assertThat(model.get("context_length").asInt()).isEqualTo(8192);
    assertThat(model.has("parameters")).isFalse();

    Http.Response forKey =
        gateway.server.http.get("/v1/models").bearer(gateway.key).send();
    List<String> ids = new ArrayList<>();
    forKey.json().get("data").forEach(m -> {
      ids.add(m.get("id").asText());
      assertThat(m.has("parameters")).isTrue();
    });
    assertThat(ids).containsExactlyInAnyOrder(GatewayFixture.MODEL, "all-minilm-l6-v2");

    Http.Response one = gateway
        .server
        .http
        .get("/v1/models/all-minilm-l6-v2")
        .bearer(gateway.key)
        .send();
    assertThat(one.json().get("parameters").asText()).isEqualTo("22M");
    assertThat(gateway
            .server
            .http
            .get("/v1/models/all-minilm-l6-v2")
            .bearer(gateway.token)
            .send()
            .status())
        .isEqualTo(200); // a token embeds with it, so it sees it
    assertThat(gateway
            .server
            .http
            .get("/v1/models/nope")
            .bearer(gateway.key)
            .send()
            .status())
        .isEqualTo(404);
    assertThat(gateway.server.http.get("/v1/models").send().status()).isEqualTo(401);
    String memoryToken = gateway.server.token(gateway.orgId, null, "memory:read");
    assertThat(gateway.server.http.get("/v1/models").bearer(memoryToken).send().status())
        .isEqualTo(403);
  }

  private static float[] floats(JsonNode array) {
    float[] values = new float[array.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) array.get(i).asDouble();
    }
    return values;
  }

  private static double dot(float[] a, float[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      sum += a[i] * b[i];
    }
    return sum;
  }

  private static double norm(float[] a) {
    return Math.sqrt(dot(a, a));
  }
}
