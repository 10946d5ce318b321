package io.engram.inference.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The safetensors format: an 8-byte little-endian header length, a JSON header naming each
 * tensor's dtype, shape and byte range, then the raw tensors. Written in F32; read from F32, F16
 * and BF16 (what the models the local engine serves and the adapters it trains are stored in).
 */
public final class Safetensors {
  /** The value of a tensor's element, by its flat index. */
  public interface Values {
    float at(String tensor, long index);
  }

  private Safetensors() {}

  /** Writes F32 tensors in the order of {@code shapes}, their values from {@code values}. */
  public static void writeF32(Path file, Map<String, int[]> shapes, Values values)
      throws IOException {
    writeF32(file, shapes, Map.of(), values);
  }

  public static void writeF32(
      Path file, Map<String, int[]> shapes, Map<String, String> metadata, Values values)
      throws IOException {
    ObjectNode header = Json.MAPPER.createObjectNode();
    ObjectNode meta = header.putObject("__metadata__").put("format", "pt");
    metadata.forEach(meta::put);
    long offset = 0;
    for (var entry : shapes.entrySet()) {
      long bytes = (long) Float.BYTES * count(entry.getValue());
      ObjectNode info = header.putObject(entry.getKey()).put("dtype", "F32");
      ArrayNode shape = info.putArray("shape");
      for (int dim : entry.getValue()) {
        shape.add(dim);
      }
      info.putArray("data_offsets").add(offset).add(offset + bytes);
      offset += bytes;
    }
    byte[] json = Json.write(header).getBytes(StandardCharsets.UTF_8);
    int padded = (json.length + 7) / 8 * 8; // the data starts 8-byte aligned
    try (OutputStream out = Files.newOutputStream(file)) {
      out.write(
          ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded).array());
      out.write(json);
      out.write(" ".repeat(padded - json.length).getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = new byte[64 * 1024];
      ByteBuffer buffer = ByteBuffer.wrap(chunk).order(ByteOrder.LITTLE_ENDIAN);
      for (var entry : shapes.entrySet()) {
        long n = count(entry.getValue());
        for (long i = 0; i < n; i++) {
          if (!buffer.hasRemaining()) {
            out.write(chunk);
            buffer.clear();
          }
          buffer.putFloat(values.at(entry.getKey(), i));
        }
      }
      out.write(chunk, 0, buffer.position());
    }
  }

  public static long count(int[] shape) {
    long n = 1;
    for (int dim : shape) {
      n *= dim;
    }
    return n;
  }

  /** Opens a file for reading tensors by name; the header is checked first ({@link SafetensorsHeader}). */
  public static Reader open(Path file) throws IOException {
    SafetensorsHeader.read(file);
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      channel.read(prefix, 0);
      long length = prefix.getLong(0);
      ByteBuffer json = ByteBuffer.allocate((int) length);
      channel.read(json, 8);
      JsonNode header = Json.MAPPER.readTree(json.array());
      Map<String, Tensor> tensors = new LinkedHashMap<>();
      Iterator<Map.Entry<String, JsonNode>> fields = header.properties().iterator();
      while (fields.hasNext()) {
        var field = fields.next();
        if (field.getKey().equals("__metadata__")) {
          continue;
        }
        JsonNode info = field.getValue();
        int[] shape = new int[info.path("shape").size()];
        for (int i = 0; i < shape.length; i++) {
          shape[i] = info.path("shape").get(i).asInt();
        }
        tensors.put(
            field.getKey(),
            new Tensor(
                info.path("dtype").asText(),
                shape,
                8 + length + info.path("data_offsets").get(0).asLong()));
      }
      return new Reader(file, tensors);
    }
  }

  /** One tensor's dtype, shape and where its bytes start in the file. */
  public record Tensor(String dtype, int[] shape, long start) {}

  /** The tensors of one file, read as floats on demand. */
  public static final class Reader {
    private final Path file;
    private final Map<String, Tensor> tensors;

    Reader(Path file, Map<String, Tensor> tensors) {
      this.file = file;
      this.tensors = tensors;
    }

    public Set<String> names() {
      return tensors.keySet();
    }

    public boolean has(String name) {
      return tensors.containsKey(name);
    }

    public int[] shape(String name) {
      return tensor(name).shape().clone();
    }

    private Tensor tensor(String name) {
      Tensor tensor = tensors.get(name);
      if (tensor == null) {
        throw new IllegalArgumentException(file.getFileName() + " has no tensor " + name);
      }
      return tensor;
    }

    /** The tensor's values as floats, converted from F16 or BF16 where stored so. */
    public float[] floats(String name) throws IOException {
      Tensor tensor = tensor(name);
      long n = count(tensor.shape());
      int width = switch (tensor.dtype()) {
        case "F32" -> 4;
        case "F16", "BF16" -> 2;
        default ->
          throw new IOException(
              name + " is stored as " + tensor.dtype() + "; only F32, F16 and BF16 are read");
      };
      if (n * width > Integer.MAX_VALUE) {
        throw new IOException(name + " is larger than 2 GB");
      }
      ByteBuffer bytes = ByteBuffer.allocate((int) (n * width)).order(ByteOrder.LITTLE_ENDIAN);
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
        long at = tensor.start();
        while (bytes.hasRemaining()) {
          int read = channel.read(bytes, at);
          if (read < 0) {
            throw new IOException(file.getFileName() + " ends inside " + name);
          }
          at += read;
        }
      }
      bytes.flip();
      float[] values = new float[(int) n];
      for (int i = 0; i < values.length; i++) {
        values[i] = switch (tensor.dtype()) {
          case "F32" -> bytes.getFloat();
          case "F16" -> Float.float16ToFloat(bytes.getShort());
          default -> Float.intBitsToFloat((bytes.getShort() & 0xffff) << 16);
        };
      }
      return values;
    }
  }
}
