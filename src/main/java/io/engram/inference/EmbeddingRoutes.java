package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.inference.engine.EngineException;
import io.engram.inference.models.ModelCard;
import io.engram.inference.usage.InferenceLimits;
import io.engram.memory.Embedder;
import io.engram.platform.VisibleText;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;

/**
 * POST /v1/embeddings with the MiniLM model memory uses ({@value #MODEL_ID}, 384 dimensions, unit
 * length). {@code input} is a string or a list of strings; {@code encoding_format} is float or
 * base64 (little-endian float32, which OpenAI's Node client asks for by default).
 */
public final class EmbeddingRoutes implements RouteModule {
  public static final String MODEL_ID = "all-minilm-l6-v2";
  public static final int MAX_INPUTS = 2048;
  public static final int MAX_INPUT_CHARS = 100_000;
  static final Set<String> FIELDS =
      Set.of("model", "input", "encoding_format", "dimensions", "user");

  private final EmbeddingGateway service;
  private final long maxBodyBytes;

  public EmbeddingRoutes(EmbeddingGateway service, long maxBodyBytes) {
    this.service = service;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** The embedding model as the model routes list it. */
  public static ModelCard card(long created) {
    return new ModelCard(MODEL_ID, created, "engram", 256, "22M");
  }

  @Override
  public void register(Routes routes) {
    // A context token embeds too: an app with one credential both chats and searches.
    routes.post("/v1/embeddings", Requires.runsModel(), this::embed);
  }

  private void embed(Context ctx) {
    Principal caller = Access.caller(ctx);
    JsonBody body = JsonBody.parseOpenAi(ctx, maxBodyBytes).allowOnly(FIELDS);
    String model = body.requiredString("model", ChatRequest.MAX_MODEL_ID);
    Gateway.mayUse(caller, model);
    boolean local = model.equals(MODEL_ID) || model.equals(Embedder.MODEL_ID);
    List<String> inputs = inputs(body.get("input"));
    boolean base64 = encoding(body);
    String user = body.optionalString("user", ChatRequest.MAX_USER).orElse(null);
    EmbeddingGateway.Embedded embedded;
    if (local) {
      body.optionalInt("dimensions", Embedder.DIMENSIONS, Embedder.DIMENSIONS);
      embedded = service.embed(
          caller, Access.inferenceSlot(ctx), MODEL_ID, inputs, HttpServer.requestId(ctx));
    } else {
      // A routed embedding model (its provider's embeddings API), or 404 naming what is served.
      Integer dimensions = body.optionalInt("dimensions", 1, 65_536).orElse(null);
      try {
        embedded = service.embedRouted(
            caller,
            Access.inferenceSlot(ctx),
            model,
            inputs,
            dimensions,
            user,
            HttpServer.requestId(ctx));
      } catch (EngineException e) {
        // The provider failed (its 5xx, a timeout, every deployment down): the client is told so
        // in OpenAI's terms (502, 503, 504), never as Engram's own 500.
        throw e.toApiException();
      }
    }
    Embedder.Embeddings embeddings = embedded.embeddings();
    InferenceLimits.TokenBudget budget = embedded.budget();
    int tokens = embeddings.tokens();
    TokenHeaders.write(ctx, budget);
    ObjectNode reply = Json.MAPPER.createObjectNode();
    reply.put("object", "list");
    ArrayNode data = reply.putArray("data");
    for (int i = 0; i < embeddings.vectors().size(); i++) {
      ObjectNode item = data.addObject().put("object", "embedding");
      float[] vector = embeddings.vectors().get(i);
      if (base64) {
        item.put("embedding", base64(vector));
      } else {
        ArrayNode values = item.putArray("embedding");
        for (float v : vector) {
          values.add(v);
        }
      }
      item.put("index", i);
    }
    reply.put("model", local ? MODEL_ID : model);
    reply.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
    Responses.json(ctx, reply);
  }

  private static List<String> inputs(JsonNode input) {
    if (input == null) {
      throw ApiException.badRequest("input", "'input' is required: a string or a list of strings");
    }
    List<JsonNode> items = new ArrayList<>();
    if (input.isArray()) {
      if (input.isEmpty() || input.size() > MAX_INPUTS) {
        throw ApiException.badRequest("input", "'input' must hold 1 to " + MAX_INPUTS + " strings");
      }
      input.forEach(items::add);
    } else {
      items.add(input);
    }
    List<String> texts = new ArrayList<>(items.size());
    for (JsonNode item : items) {
      if (item.isNumber() || item.isArray()) {
        throw ChatRequest.unsupported(
            "input", "token arrays are not supported as 'input'; send text");
      }
      if (!item.isTextual() || VisibleText.isEmpty(item.asText())) {
        throw ApiException.badRequest(
            "input",
            "'input' must be a non-empty string or a list of non-empty strings (text of only"
                + " white space, control or format characters is empty)");
      }
      if (item.asText().length() > MAX_INPUT_CHARS) {
        throw ApiException.badRequest(
            "input", "each input must be at most " + MAX_INPUT_CHARS + " characters");
      }
      texts.add(item.asText());
    }
    return texts;
  }

  private static boolean encoding(JsonBody body) {
    String format = body.optionalString("encoding_format", 16).orElse("float");
    return switch (format) {
      case "float" -> false;
      case "base64" -> true;
      default ->
        throw ApiException.badRequest(
            "encoding_format", "'encoding_format' must be float or base64");
    };
  }

  private static String base64(float[] vector) {
    ByteBuffer bytes =
        ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : vector) {
      bytes.putFloat(v);
    }
    return Base64.getEncoder().encodeToString(bytes.array());
  }
}
