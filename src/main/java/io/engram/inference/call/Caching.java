package io.engram.inference.call;

/**
 * How a call met the response cache: {@code key} null when it was not consulted (off for the
 * organization or the request), {@code hit} the kept answer it is served from (null: a miss).
 */
public record Caching(String key, ResponseCache.Entry hit, long ttlSeconds) {
  static final Caching OFF = new Caching(null, null, 0);

  /** The X-Engram-Cache answer: hit, miss, or null when the cache was not consulted. */
  public String status() {
    return key == null ? null : hit != null ? "hit" : "miss";
  }
}
