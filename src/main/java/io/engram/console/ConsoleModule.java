package io.engram.console;

import io.engram.platform.http.Routes;
import io.engram.platform.module.Module;

/** The web console, served at / and /console/* in front of every other route. */
public final class ConsoleModule implements Module {
  @Override
  public String name() {
    return "console";
  }

  @Override
  public void register(Routes routes) {
    routes.filter(new ConsoleFilter(ConsoleModule.class.getClassLoader()));
  }
}
