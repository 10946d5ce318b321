package io.engram.platform.module;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's modules in the order they were opened, which is their dependency order: each is
 * closed in the reverse order (a module before the ones it stands on), and a failure to close one
 * does not keep the others open.
 */
public final class Modules implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Modules.class);

  private final List<Module> opened = new ArrayList<>();

  /** Records an opened module and hands it back, so opening reads as one line. */
  public synchronized <T extends Module> T add(T module) {
    opened.add(module);
    return module;
  }

  public synchronized List<Module> all() {
    return List.copyOf(opened);
  }

  /** The module of that kind (the server's accessors and tests). */
  public synchronized <T> T find(Class<T> kind) {
    return opened.stream()
        .filter(kind::isInstance)
        .map(kind::cast)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no module " + kind.getSimpleName()));
  }

  @Override
  public void close() {
    for (Module module : all().reversed()) {
      try {
        module.close();
      } catch (RuntimeException e) {
        LOG.warn("module {} did not close cleanly: {}", module.name(), e.toString());
      }
    }
  }
}
