package io.engram.inference.local;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The header of a safetensors file (an 8-byte little-endian length, then a JSON table of tensors
 * with dtype, shape and data offsets), read and checked without reading the weights: every
 * tensor's bytes must lie inside the file and match its shape, so a truncated or forged file is
 * refused before an engine maps it.
 */
public record SafetensorsHeader(int tensors, long parameters, Set<List<Long>> shapes) {
  static final long MAX_HEADER = 100L * 1024 * 1024;

  /** Bytes per element of the standard dtypes; jlama's packed Q4 and Q5 are checked for bounds only. */
  private static final Map<String, Integer> ELEMENT_BYTES = Map.ofEntries(
      Map.entry("BOOL", 1),
      Map.entry("U8", 1),
      Map.entry("I8", 1),
      Map.entry("F8_E4M3", 1),
      Map.entry("F8_E5M2", 1),
      Map.entry("I16", 2),
      Map.entry("U16", 2),
      Map.entry("F16", 2),
      Map.entry("BF16", 2),
      Map.entry("I32", 4),
      Map.entry("U32", 4),
      Map.entry("F32", 4),
      Map.entry("F64", 8),
      Map.entry("I64", 8),
      Map.entry("U64", 8),
      Map.entry("Q4", 0),
      Map.entry("Q5", 0));

  /** The file is not a well-formed safetensors file; the message says why. */
  public static final class InvalidException extends IOException {
    InvalidException(String message) {
      super(message);
    }
  }

  public static SafetensorsHeader read(Path file) throws IOException {
    long size = Files.size(file);
    try (InputStream in = Files.newInputStream(file)) {
      byte[] prefix = in.readNBytes(8);
      if (prefix.length != 8) {
        throw new InvalidException("the file is shorter than the 8-byte header length");
      }
      long length = ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).getLong();
      if (length < 2 || length > MAX_HEADER || 8 + length > size) {
        throw new InvalidException("the header length " + length + " is not between 2 and "
            + Math.min(MAX_HEADER, size - 8) + " bytes");
      }
      JsonNode header;
      try {
        header = Json.MAPPER.readTree(in.readNBytes((int) length));
      } catch (JsonProcessingException e) {
        throw new InvalidException("the header is not JSON: " + e.getOriginalMessage());
      }
      if (header == null || !header.isObject()) {
        throw new InvalidException("the header is not a JSON object");
      }
      return tensors(header, size - 8 - length);
    }
  }

  /** Whether some tensor has exactly this shape. */
  public boolean hasShape(long... dims) {
    return shapes.contains(java.util.Arrays.stream(dims).boxed().toList());
  }

  private static SafetensorsHeader tensors(JsonNode header, long dataBytes)
      throws InvalidException {
    int tensors = 0;
    long parameters = 0;
    Set<List<Long>> shapes = new HashSet<>();
    for (var entry : header.properties()) {
      if (entry.getKey().equals("__metadata__")) {
        continue;
      }
      String name = entry.getKey();
      JsonNode tensor = entry.getValue();
      Integer elementBytes = ELEMENT_BYTES.get(tensor.path("dtype").asText(""));
      if (elementBytes == null) {
        throw new InvalidException(
            "tensor '" + name + "' has an unknown dtype " + tensor.path("dtype"));
      }
      long elements = elements(name, tensor.path("shape"));
      JsonNode offsets = tensor.path("data_offsets");
      if (!offsets.isArray()
          || offsets.size() != 2
          || !offsets.get(0).canConvertToLong()
          || !offsets.get(1).canConvertToLong()) {
        throw new InvalidException("tensor '" + name + "' needs data_offsets [begin, end]");
      }
      long begin = offsets.get(0).asLong();
      long end = offsets.get(1).asLong();
      if (begin < 0 || end < begin || end > dataBytes) {
        throw new InvalidException("tensor '" + name + "' has data_offsets [" + begin + ", " + end
            + "] outside the " + dataBytes + " bytes of data (a truncated file?)");
      }
      if (elementBytes > 0 && end - begin != elements * elementBytes) {
        throw new InvalidException("tensor '" + name + "' holds " + (end - begin)
            + " bytes; its shape and dtype need " + elements * elementBytes);
      }
      tensors++;
      parameters += elements;
      List<Long> shape = new ArrayList<>();
      tensor.path("shape").forEach(dim -> shape.add(dim.asLong()));
      shapes.add(List.copyOf(shape));
    }
    if (tensors == 0) {
      throw new InvalidException("the file holds no tensors");
    }
    return new SafetensorsHeader(tensors, parameters, Set.copyOf(shapes));
  }

  private static long elements(String name, JsonNode shape) throws InvalidException {
    if (!shape.isArray()) {
      throw new InvalidException("tensor '" + name + "' has no shape");
    }
    long elements = 1;
    for (JsonNode dim : shape) {
      if (!dim.canConvertToLong() || !dim.isIntegralNumber() || dim.asLong() < 0) {
        throw new InvalidException("tensor '" + name + "' has a shape that is not a list of sizes");
      }
      try {
        elements = Math.multiplyExact(elements, dim.asLong());
      } catch (ArithmeticException e) {
        throw new InvalidException("tensor '" + name + "' has an impossible shape");
      }
    }
    if (elements > Long.MAX_VALUE / 8) {
      throw new InvalidException("tensor '" + name + "' has an impossible shape");
    }
    return elements;
  }
}
