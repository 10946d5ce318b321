package io.engram.instances.retention;

import io.engram.instances.files.FileStore;
import io.engram.instances.storage.ConversationHistory;
import io.engram.instances.storage.DataClass;
import io.engram.instances.storage.InstanceViews;
import io.engram.instances.storage.StoredFile;
import io.engram.objectstores.ObjectStore;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.objectstores.ObjectUri;
import io.engram.objectstores.StoredObject;
import io.engram.organizations.Organization;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * Writes what retention is about to delete to an object store, and checks it is there (size and
 * checksum as the store describes the object) before the delete may go on. Keys: {@code
 * <prefix><instance id>/<path>} for files, {@code <prefix><instance
 * id>/conversation_history/<exchange id>.json} for an exchange (as the conversations API shows
 * it). The stores a run opens are closed at its end.
 */
final class RetentionExport implements AutoCloseable {
  private final ObjectStoreConnections stores;
  private final FileStore files;
  private final ConversationHistory history;
  private final Organization org;
  private final Map<String, ObjectStore> opened = new HashMap<>();

  RetentionExport(
      ObjectStoreConnections stores,
      FileStore files,
      ConversationHistory history,
      Organization org) {
    this.stores = stores;
    this.files = files;
    this.history = history;
    this.org = org;
  }

  /** Writes the item under {@code destination}; an exception when any part did not arrive. */
  void write(Retention.Item item, String destination) throws IOException {
    ObjectUri prefix = ObjectUri.parse(destination, "destination");
    ObjectStore store = opened.computeIfAbsent(
        prefix.provider().scheme() + "://" + prefix.bucket(),
        k -> stores.openForOrganization(org.id(), item.instanceId(), prefix, "destination"));
    String base = (prefix.isPrefix() ? prefix.key() : prefix.key() + "/") + item.instanceId() + "/";
    if (item.type() == DataClass.CONVERSATION_HISTORY) {
      byte[] json = Json.write(
              InstanceViews.exchange(history.get(item.instanceId(), item.name()), true))
          .getBytes(StandardCharsets.UTF_8);
      Path temp = Files.createTempFile("engram-retention", ".json");
      try {
        Files.write(temp, json);
        put(
            store,
            base + "conversation_history/" + item.name() + ".json",
            temp,
            json.length,
            sha256(json));
      } finally {
        Files.deleteIfExists(temp);
      }
      return;
    }
    for (String path : item.paths()) {
      StoredFile file = files.find(item.instanceId(), path).orElse(null);
      if (file != null) {
        put(store, base + path, files.bytes(file), file.size(), file.sha256());
      }
    }
  }

  private static void put(ObjectStore store, String key, Path bytes, long size, String sha256)
      throws IOException {
    store.write(key, bytes, sha256);
    StoredObject written = store
        .head(key)
        .orElseThrow(() -> new IOException(key + " is not in the store after it was written"));
    if (written.size() != size
        || written.sha256() != null && !written.sha256().equalsIgnoreCase(sha256)) {
      throw new IOException(key + " holds " + written.size() + " bytes, not " + size);
    }
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    opened.values().forEach(ObjectStore::close);
  }
}
