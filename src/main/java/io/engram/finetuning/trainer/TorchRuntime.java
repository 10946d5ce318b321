package io.engram.finetuning.trainer;

import ai.djl.engine.Engine;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * PyTorch through the Deep Java Library, set up to run offline: libtorch comes from the
 * pytorch-native-cpu jar on the class path (unpacked once into a cache directory), never from the
 * network. Threads = cores. PyTorch's autograd collects gradients for one caller at a time in a
 * process, so every gradient step holds {@link #GRADIENTS}.
 */
public final class TorchRuntime {
  /** Held for the length of one forward and backward pass with gradients. */
  public static final ReentrantLock GRADIENTS = new ReentrantLock(true);

  private static volatile Engine engine;

  private TorchRuntime() {}

  /**
   * The engine, started on first use. The native libraries are unpacked under {@code cacheDir}
   * unless the operator set DJL_CACHE_DIR.
   */
  public static Engine engine(Path cacheDir) {
    Engine started = engine;
    if (started == null) {
      synchronized (TorchRuntime.class) {
        if (engine == null) {
          configure(cacheDir);
          engine = Engine.getEngine("PyTorch");
        }
        started = engine;
      }
    }
    return started;
  }

  private static void configure(Path cacheDir) {
    String threads = String.valueOf(Runtime.getRuntime().availableProcessors());
    System.setProperty("ai.djl.offline", "true");
    setIfAbsent("PYTORCH_VERSION", "2.7.1");
    setIfAbsent("PYTORCH_FLAVOR", "cpu");
    setIfAbsent("ai.djl.pytorch.num_threads", threads);
    setIfAbsent("ai.djl.pytorch.num_interop_threads", "1");
    if (System.getenv("DJL_CACHE_DIR") == null) {
      setIfAbsent("DJL_CACHE_DIR", cacheDir.toString());
    }
  }

  private static void setIfAbsent(String name, String value) {
    if (System.getProperty(name) == null && System.getenv(name) == null) {
      System.setProperty(name, value);
    }
  }

  /**
   * Turns autograd off on the calling thread. PyTorch's grad mode is per thread and on by default
   * in a new one; outside a gradient collector the trainer updates parameters in place, which
   * PyTorch refuses while it is on.
   */
  public static void withoutGradients() {
    ai.djl.pytorch.jni.JniUtils.setGradMode(false);
  }

  /** Where the native libraries go by default: the user's cache, shared by every data directory. */
  public static Path defaultCacheDir() {
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base = xdg == null || xdg.isBlank()
        ? Path.of(System.getProperty("user.home"), ".cache")
        : Path.of(xdg);
    return base.resolve("engram").resolve("pytorch");
  }
}
