package io.engram.instances.files;

import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoredFile;
import io.engram.objectstores.ObjectStore;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.objectstores.ObjectStoreException;
import io.engram.objectstores.ObjectUri;
import io.engram.objectstores.StoredObject;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorType;
import java.util.ArrayList;
import java.util.List;

/**
 * Plans a job when it is asked for: every file it will carry, checked then, so that a bad path, a
 * missing source, a store not connected or a job too big for the allowance is the request's 4xx,
 * not a job that fails later.
 */
public final class JobPlans {
  /** One file to carry: source (a path or an object key), destination, size. */
  public record Planned(String source, String destination, long bytes) {}

  /** The most files one job carries. */
  static final int MAX_ITEMS = 10_000;

  private JobPlans() {}

  /** An import: one object, or every object under a prefix into a folder. */
  public static List<Planned> ofImport(
      ObjectStoreConnections stores, String instanceId, ObjectUri source, String destination) {
    List<Planned> planned = new ArrayList<>();
    try (ObjectStore store = stores.open(instanceId, source, "source")) {
      if (source.isPrefix()) {
        folder(destination, "destination");
        List<StoredObject> objects = store.list(source.key(), MAX_ITEMS + 1);
        for (StoredObject object : objects) {
          if (!object.key().endsWith("/")) { // a "folder" marker some consoles write
            String path = destination + object.key().substring(source.key().length());
            planned.add(new Planned(object.key(), writable(path, "destination"), object.size()));
          }
        }
        if (planned.size() > MAX_ITEMS) {
          throw tooMany("source");
        }
      } else {
        StoredObject object = store
            .head(source.key())
            .orElseThrow(
                () -> ApiException.notFound("object_not_found", "source", "No object " + source));
        String path = destination.endsWith("/")
            ? destination + source.key().substring(source.key().lastIndexOf('/') + 1)
            : destination;
        planned.add(new Planned(object.key(), writable(path, "destination"), object.size()));
      }
    } catch (ObjectStoreException e) {
      throw refused(e);
    }
    if (planned.isEmpty()) {
      throw ApiException.notFound("object_not_found", "source", "No object under " + source);
    }
    return planned;
  }

  /** An export: one file, or every file under a folder, to an object or under a prefix. */
  public static List<Planned> ofExport(
      FileStore files, String instanceId, String source, ObjectUri to) {
    if (source.endsWith("/") && !to.isPrefix()) {
      throw ApiException.badRequest(
          "destination", "A folder goes under a prefix: end the destination with '/'");
    }
    List<Planned> planned = new ArrayList<>();
    for (StoredFile file : sources(files, instanceId, source, "source")) {
      String key = source.endsWith("/")
          ? to.key() + file.path().substring(source.length())
          : to.isPrefix()
              ? to.key() + file.path().substring(file.path().lastIndexOf('/') + 1)
              : to.key();
      // Checked as a URI of its own: a file name could make a key no store should see.
      ObjectUri.parse(to.provider().scheme() + "://" + to.bucket() + "/" + key, "destination");
      planned.add(new Planned(file.path(), key, file.size()));
    }
    return planned;
  }

  /** A copy between instances: one file, or a folder into a folder. */
  public static List<Planned> ofCopy(
      FileStore files, String instanceId, String source, String destination) {
    List<Planned> planned = new ArrayList<>();
    if (source.endsWith("/")) {
      folder(destination, "destination_path");
    }
    for (StoredFile file : sources(files, instanceId, source, "source_path")) {
      // A folder's files keep their names under it; one file into a folder keeps its name too.
      String path = source.endsWith("/")
          ? destination + file.path().substring(source.length())
          : destination.endsWith("/")
              ? destination + file.path().substring(file.path().lastIndexOf('/') + 1)
              : destination;
      planned.add(new Planned(file.path(), writable(path, "destination_path"), file.size()));
    }
    return planned;
  }

  private static List<StoredFile> sources(
      FileStore files, String instanceId, String source, String param) {
    if (!source.endsWith("/")) {
      return List.of(files.get(instanceId, StoragePath.of(source, param)));
    }
    StoragePath.of(source + "x", param);
    List<StoredFile> found = files.list(instanceId, source, null, MAX_ITEMS + 1);
    if (found.size() > MAX_ITEMS) {
      throw tooMany(param);
    }
    if (found.isEmpty()) {
      throw ApiException.notFound("file_not_found", param, "No file under " + source);
    }
    return found;
  }

  private static void folder(String destination, String param) {
    if (!destination.endsWith("/")) {
      throw ApiException.badRequest(
          param, "A folder goes into a folder: end " + param + " with '/'");
    }
    StoragePath.of(destination + "x", param);
  }

  private static String writable(String path, String param) {
    StoragePath target = StoragePath.of(path, param);
    if (!target.dataClass().writableByFiles()) {
      throw ApiException.forbidden(
          "read_only_class", target.dataClass().wireName() + " is written by the gateway");
    }
    return target.value();
  }

  private static ApiException tooMany(String param) {
    return ApiException.badRequest(
        param, "A job carries at most " + MAX_ITEMS + " files; split it by folder or prefix");
  }

  /** A store that refused while planning: its answer, naming the URI's field. */
  static ApiException refused(ObjectStoreException e) {
    return switch (e.kind()) {
      case DENIED -> ApiException.invalid("object_store_denied", "source", e.getMessage());
      case NOT_FOUND -> ApiException.notFound("object_not_found", "source", e.getMessage());
      case UNREACHABLE, FAILED ->
        ApiException.of(
            502, ErrorType.SERVER_ERROR, "object_store_unreachable", e.getMessage(), null);
    };
  }
}
