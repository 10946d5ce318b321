package io.engram.settings;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** The body of a request that sets environment variables: {@code {"variables": {NAME: "value"}}}. */
public final class VariablesBody {
  public static final int MAX_PER_REQUEST = 100;

  private VariablesBody() {}

  /** The names and values sent, in order; 400 naming what is wrong with the body. */
  public static Map<String, String> read(Context ctx, long maxBodyBytes) {
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes);
    body.allowOnly(Set.of("variables"));
    JsonNode variables = body.get("variables");
    if (variables == null || !variables.isObject() || variables.isEmpty()) {
      throw ApiException.badRequest(
          "variables", "'variables' must be an object of names to string values, not empty");
    }
    if (variables.size() > MAX_PER_REQUEST) {
      throw ApiException.badRequest(
          "variables", "At most " + MAX_PER_REQUEST + " variables per request");
    }
    Map<String, String> values = new LinkedHashMap<>();
    for (var entry : variables.properties()) {
      if (!entry.getValue().isTextual()) {
        throw ApiException.badRequest(
            "variables." + entry.getKey(),
            "Variable values are strings (the spec's form): send \"" + entry.getValue() + "\"");
      }
      values.put(entry.getKey(), entry.getValue().asText());
    }
    return values;
  }
}
