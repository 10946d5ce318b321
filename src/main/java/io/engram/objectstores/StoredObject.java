package io.engram.objectstores;

import java.time.Instant;

/**
 * An object as its store describes it; {@code sha256} is the checksum Engram wrote into the
 * object's metadata when it exported it, or null for an object written by someone else.
 */
public record StoredObject(String key, long size, Instant modified, String sha256) {}
