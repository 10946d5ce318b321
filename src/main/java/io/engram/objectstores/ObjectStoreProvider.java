package io.engram.objectstores;

import java.util.Arrays;
import java.util.Optional;

/** The object-store providers an instance connects, each with its route name and URI scheme. */
public enum ObjectStoreProvider {
  S3("s3", "s3"),
  GCS("gcs", "gs"),
  AZURE("azure", "azure");

  private final String wireName;
  private final String scheme;

  ObjectStoreProvider(String wireName, String scheme) {
    this.wireName = wireName;
    this.scheme = scheme;
  }

  public String wireName() {
    return wireName;
  }

  public String scheme() {
    return scheme;
  }

  public static Optional<ObjectStoreProvider> ofScheme(String scheme) {
    return Arrays.stream(values()).filter(p -> p.scheme.equals(scheme)).findFirst();
  }

  public static Optional<ObjectStoreProvider> of(String wireName) {
    return Arrays.stream(values()).filter(p -> p.wireName.equals(wireName)).findFirst();
  }
}
