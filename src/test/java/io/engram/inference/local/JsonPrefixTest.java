package io.engram.inference.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The JSON-mode reader against Jackson: every prefix of a valid object is taken, and its
 * completion makes an object Jackson reads; what no object could continue with is refused.
 */
class JsonPrefixTest {

  @Test
  void everyPrefixOfRandomObjectsIsTakenAndItsCompletionIsValidJson() {
    Random random = new Random(20261124);
    for (int round = 0; round < 300; round++) {
      String json = spaced(Json.write(object(random, 0)), random);
      JsonPrefix prefix = new JsonPrefix();
      for (int i = 0; i < json.length(); i++) {
        assertThat(prefix.complete()).as(json.substring(0, i)).isFalse();
        String completed = json.substring(0, i) + prefix.completion();
        assertThat(Json.read(completed, JsonNode.class).isObject())
            .as(completed)
            .isTrue();
        assertThat(prefix.accept(json.charAt(i))).as(json + " at " + i).isTrue();
      }
      assertThat(prefix.complete()).as(json).isTrue();
      assertThat(prefix.completion()).isEmpty();
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "[1]",
        "\"a\"",
        "1",
        "{,",
        "{\"a\" 1",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\":01",
        "{\"a\":1.}",
        "{\"a\":-}",
        "{\"a\":tru}",
        "{\"a\":nul1",
        "{\"a\":\"\\x\"",
        "{\"a\":\"\\u12g",
        "{}}",
        "{} ",
        "{\"a\":[1,]}",
        "{\"a\":[}",
        "{\"a\":1]",
        "{\"a\"\n:\t\t1}",
        "{\"a\":\"\u0001\"}",
        "{\"a\":1e}",
        "{\"a\":.5}"
      })
  void whatNoObjectCouldContinueWithIsRefused(String text) {
    assertThat(new JsonPrefix().accept(text)).isFalse();
  }

  @Test
  void aCopyGoesOnAlone() {
    JsonPrefix prefix = new JsonPrefix();
    prefix.accept("{\"a\":[[");
    JsonPrefix copy = prefix.copy();
    assertThat(copy.accept("]]}")).isTrue();
    assertThat(copy.complete()).isTrue();
    assertThat(prefix.completion()).isEqualTo("]]}");
  }

  private static String spaced(String json, Random random) {
    // Single spaces where JSON allows whitespace (outside strings), at random.
    StringBuilder out = new StringBuilder();
    boolean inString = false;
    for (int i = 0; i < json.length(); i++) {
      char c = json.charAt(i);
      out.append(c);
      if (c == '"' && (i == 0 || json.charAt(i - 1) != '\\')) {
        inString = !inString;
      }
      if (!inString
          && "{}[],:".indexOf(c) >= 0
          && i < json.length() - 1
          && random.nextInt(4) == 0) {
        out.append(random.nextBoolean() ? ' ' : '\n');
      }
    }
    return out.toString();
  }

  private static ObjectNode object(Random random, int depth) {
    ObjectNode object = Json.MAPPER.createObjectNode();
    int fields = random.nextInt(depth > 2 ? 2 : 4);
    for (int i = 0; i < fields; i++) {
      String key = random.nextBoolean() ? "k" + i : "ké\"\\\t" + i;
      switch (random.nextInt(depth > 2 ? 5 : 7)) {
        case 0 -> object.put(key, random.nextInt(2000) - 1000);
        case 1 -> object.put(key, random.nextDouble() * 1e6 - 5e5);
        case 2 -> object.put(key, random.nextBoolean());
        case 3 -> object.putNull(key);
        case 4 -> object.put(key, "v\u00e9\u4e2d\n\"\\/" + random.nextInt(99) + "\u0007");
        case 5 -> object.set(key, object(random, depth + 1));
        default -> {
          ArrayNode array = object.putArray(key);
          for (int j = 0; j < random.nextInt(4); j++) {
            array.add(
                random.nextBoolean() ? object(random, depth + 1) : Json.MAPPER.valueToTree(j));
          }
        }
      }
    }
    return object;
  }
}
