package io.engram.platform.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.UncheckedIOException;

/**
 * The one ObjectMapper of the service, configured once. Fractional numbers in request bodies are
 * read as exact decimals: read as doubles, {@code 1e400} would become Infinity, which no bound
 * check can compare (it was a 500), and {@code 0.1} would not be what the client sent. Trailing
 * zeros are kept so a value is echoed as it was written.
 *
 * <p>The parsers' and generators' buffers come from one pool the whole process shares. Jackson's
 * default keeps them per thread, which helps nothing on virtual threads (each request is a new
 * thread): every body read and every answer written allocated its buffers anew (docs/benchmarks.md,
 * issue 43).
 */
public final class Json {

  public static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
          .recyclerPool(JsonRecyclerPools.sharedConcurrentDequePool())
          .build())
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
      .build();

  private Json() {}

  public static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static <T> T read(String json, Class<T> type) {
    try {
      return MAPPER.readValue(json, type);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static <T> T read(String json, com.fasterxml.jackson.core.type.TypeReference<T> type) {
    try {
      return MAPPER.readValue(json, type);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
