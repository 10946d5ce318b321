package io.engram.inference.local;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.Q4ByteBufferTensor;
import com.github.tjake.jlama.tensor.Q8ByteBufferTensor;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;

/**
 * The memory a loaded model's quantized weights take: the int4 (or int8) copies jlama made at
 * load, with their blocks' scales. Unquantized weights are read from the mapped file and take
 * none of it. jlama does not report this, so the model's object graph is walked once after load
 * (jlama's own objects only), counting each quantized tensor once.
 */
final class QuantizedWeights {
  private QuantizedWeights() {}

  static long bytes(AbstractModel model) {
    Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    Deque<Object> next = new ArrayDeque<>();
    next.push(model);
    long bytes = 0;
    while (!next.isEmpty()) {
      Object object = next.pop();
      if (!seen.add(object)) {
        continue;
      }
      if (object instanceof Q4ByteBufferTensor q4) {
        bytes += q4.size() / 2 + q4.getBlockF().size() * Float.BYTES;
      } else if (object instanceof Q8ByteBufferTensor q8) {
        bytes += q8.size() + q8.getBlockF().size() * Float.BYTES;
      } else if (object instanceof AbstractTensor) {
        continue; // the file's own weights, or working buffers: not quantized copies
      } else if (object instanceof Optional<?> optional) {
        optional.ifPresent(value -> push(next, value));
      } else if (object.getClass().isArray()) {
        if (!object.getClass().getComponentType().isPrimitive()) {
          for (int i = 0; i < Array.getLength(object); i++) {
            push(next, Array.get(object, i));
          }
        }
      } else if (isModelPart(object.getClass())) {
        pushFields(object, next);
      }
    }
    return bytes;
  }

  private static void push(Deque<Object> next, Object value) {
    if (value != null) {
      next.push(value);
    }
  }

  /** jlama's layers and the lambdas and classes that hold their weights; not its caches. */
  private static boolean isModelPart(Class<?> type) {
    String name = type.getName();
    return name.startsWith("com.github.tjake.jlama.model.")
        && !name.contains("Tokenizer")
        && !name.contains("Config");
  }

  private static void pushFields(Object object, Deque<Object> next) {
    for (Class<?> type = object.getClass(); type != null; type = type.getSuperclass()) {
      for (Field field : type.getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers()) || field.getType().isPrimitive()) {
          continue;
        }
        try {
          field.setAccessible(true);
          push(next, field.get(object));
        } catch (ReflectiveOperationException | RuntimeException e) {
          // a field jlama keeps out of reach holds no weights we could count
        }
      }
    }
  }
}
