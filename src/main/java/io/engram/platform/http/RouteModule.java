package io.engram.platform.http;

/** A domain's routes; {@code main} hands each module the route table. */
@FunctionalInterface
public interface RouteModule {
  void register(Routes routes);
}
