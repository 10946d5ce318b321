package io.engram.inference.models;

import io.engram.inference.engine.EngineException;
import io.engram.inference.local.LocalEngine;
import io.engram.inference.local.LocalModels;
import io.engram.organizations.Limit;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.MultipartReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Models organizations upload ({@code POST /v1/models}). An upload is received into a staging
 * directory, checked ({@link UploadedModelCheck}), loaded and run for one token by the local
 * engine, and only then moved into place under {@code MODEL_CACHE_DIR/.uploads/<org_id>/<model_id>}
 * in one rename, so a model directory is either complete or absent. An organization sees and uses
 * only its own uploads; another node on the same MODEL_CACHE_DIR finds them on disk when first asked.
 */
public final class ModelUploads implements ModelCatalog.OrganizationModels, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ModelUploads.class);
  static final Pattern MODEL_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,127}");
  static final long GB = 1_000_000_000L;
  private static final long STAGING_ABANDONED_MILLIS = 60 * 60 * 1000L;

  private final Path root;
  private final Path staging;
  private final Function<Path, LocalEngine> engines;
  private final Predicate<String> instanceIds;
  private final Map<String, ModelCatalog.Entry> known = new ConcurrentHashMap<>();
  private final Object installing = new Object();

  /**
   * @param engines     a local engine for a model directory
   * @param instanceIds the ids every organization already sees (configured models, the embedding model)
   */
  public ModelUploads(
      Path modelCacheDir, Function<Path, LocalEngine> engines, Predicate<String> instanceIds) {
    this.root = modelCacheDir.resolve(".uploads");
    this.staging = modelCacheDir.resolve(".staging");
    this.engines = engines;
    this.instanceIds = instanceIds;
    removeAbandonedStaging();
  }

  /**
   * Removes what a crash left half-received. Only staging directories untouched for an hour go:
   * nodes sharing MODEL_CACHE_DIR may be receiving uploads right now, and a receiving upload
   * writes to its directory continuously.
   */
  private void removeAbandonedStaging() {
    if (!Files.isDirectory(staging)) {
      return;
    }
    long cutoff = System.currentTimeMillis() - STAGING_ABANDONED_MILLIS;
    try (Stream<Path> uploads = Files.list(staging)) {
      uploads.filter(dir -> lastWrite(dir) < cutoff).forEach(ModelUploads::deleteTree);
    } catch (IOException e) {
      LOG.warn("cannot list {}: {}", staging, e.toString());
    }
  }

  /** The newest modification time in a directory tree. */
  private static long lastWrite(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      return paths.mapToLong(path -> path.toFile().lastModified()).max().orElse(0);
    } catch (IOException e) {
      return Long.MAX_VALUE; // unreadable now: leave it for the next start
    }
  }

  /** The bytes an organization may upload now: MAX_MODEL_SIZE_GB (else its plan's storage), within what is left. */
  record Quota(long bytes, String what) {
    ApiException exceeded() {
      return MultipartReader.tooLarge(bytes, what);
    }
  }

  Quota quota(Organization org, OptionalInt maxModelSizeGb) {
    Limit storage = org.plan().limits().storageGb();
    long perModel = maxModelSizeGb.isPresent()
        ? maxModelSizeGb.getAsInt() * GB
        : storage.isUnlimited() ? Long.MAX_VALUE : storage.value() * GB;
    String perModelWhat = maxModelSizeGb.isPresent() ? "MAX_MODEL_SIZE_GB" : "the plan's storage";
    if (storage.isUnlimited()) {
      return new Quota(perModel, perModelWhat);
    }
    long left = Math.max(0, storage.value() * GB - bytesUsed(org.id()));
    return left < perModel
        ? new Quota(left, "the storage left on the plan (" + storage.value() + " GB)")
        : new Quota(perModel, perModelWhat);
  }

  /** Receives, checks, proves and installs one upload; the model is listed and servable when this returns. */
  public ModelCatalog.Entry upload(
      Organization org,
      String contentType,
      long declaredLength,
      InputStream body,
      OptionalInt maxModelSizeGb) {
    Quota quota = quota(org, maxModelSizeGb);
    if (declaredLength > quota.bytes()) {
      throw quota.exceeded();
    }
    MultipartReader form = MultipartReader.of(contentType, body, quota.bytes(), quota::exceeded);
    Path dir = createStaging();
    try {
      UploadedModelCheck.Received received =
          UploadedModelCheck.receive(form, dir, id -> refuseTaken(org.id(), id));
      UploadedModelCheck.verify(dir, received.modelType());
      prove(dir);
      return install(org.id(), received.modelId(), dir);
    } finally {
      deleteTree(dir);
    }
  }

  /**
   * Installs a model a fine-tuning job built in {@link #newStagingDir()}: proven by the local
   * engine like an upload, then moved into place; listed and servable when this returns.
   */
  public ModelCatalog.Entry installTrained(String orgId, String modelId, Path dir) {
    try {
      prove(dir);
      return install(orgId, modelId, dir);
    } finally {
      deleteTree(dir);
    }
  }

  /** A fresh directory beside the installed models, where a model is built before it is installed. */
  public Path newStagingDir() {
    return createStaging();
  }

  /** Called when an organization's model is deleted: what refers to it is freed. */
  public interface Deletions {
    void deleted(String orgId, String modelId);
  }

  private final List<Deletions> deletions = new java.util.concurrent.CopyOnWriteArrayList<>();

  public void onDelete(Deletions listener) {
    deletions.add(listener);
  }

  /** Deletes one of the organization's models (an upload or a fine-tuned model); false when it has none by that id. */
  @Override
  public boolean delete(String orgId, String modelId) {
    if (!MODEL_ID.matcher(modelId).matches() || !Files.isDirectory(modelDir(orgId, modelId))) {
      return false;
    }
    ModelCatalog.Entry entry = known.remove(orgId + "/" + modelId);
    if (entry != null) {
      ((LocalEngine) entry.engine()).close();
    }
    Path target = modelDir(orgId, modelId);
    Path doomed = staging.resolve("deleting-" + java.util.UUID.randomUUID());
    try {
      Files.createDirectories(staging);
      Files.move(target, doomed, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw storageFailure(e);
    }
    deleteTree(doomed);
    deletions.forEach(listener -> listener.deleted(orgId, modelId));
    LOG.info("inference: organization {} deleted model '{}'", orgId, modelId);
    return true;
  }

  private void refuseTaken(String orgId, String id) {
    if (instanceIds.test(id) || Files.exists(modelDir(orgId, id))) {
      throw ApiException.conflict(
          "model_exists",
          "A model named '" + id + "' already exists; choose another " + "model_id");
    }
  }

  /** The local engine must load the model and run a token through it, or the upload is refused. */
  private void prove(Path dir) {
    try (LocalEngine probe = engines.apply(dir)) {
      probe.probe();
    } catch (EngineException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      String reason = String.valueOf(cause.getMessage()).replace(dir.toString(), "<upload>");
      throw ApiException.invalid(
          "invalid_model", "file", "The local engine cannot run this model: " + reason);
    }
  }

  private ModelCatalog.Entry install(String orgId, String modelId, Path dir) {
    Path target = modelDir(orgId, modelId);
    synchronized (installing) {
      refuseTaken(orgId, modelId);
      try {
        Files.createDirectories(target.getParent());
        Files.move(dir, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (FileAlreadyExistsException e) {
        refuseTaken(orgId, modelId);
        throw new UncheckedIOException(e);
      } catch (IOException e) {
        throw storageFailure(e);
      }
    }
    LOG.info("inference: organization {} uploaded model '{}' ({})", orgId, modelId, target);
    return find(orgId, modelId)
        .orElseThrow(() -> new IllegalStateException("an installed model did not inspect"));
  }

  @Override
  public Optional<ModelCatalog.Entry> loaded(String orgId, String id) {
    return Optional.ofNullable(known.get(orgId + "/" + id));
  }

  @Override
  public Optional<ModelCatalog.Entry> find(String orgId, String id) {
    if (!MODEL_ID.matcher(id).matches()) {
      return Optional.empty(); // never a path outside the organization's directory
    }
    ModelCatalog.Entry entry = known.get(orgId + "/" + id);
    if (entry != null) {
      return Optional.of(entry);
    }
    Path dir = modelDir(orgId, id);
    if (!Files.isDirectory(dir)) {
      return Optional.empty();
    }
    return LocalModels.inspect(dir)
        .map(found -> known.computeIfAbsent(orgId + "/" + id, key -> {
          LocalEngine engine = engines.apply(dir);
          return new ModelCatalog.Entry(
              new ModelCard(
                  id,
                  found.createdEpochSeconds(),
                  orgId,
                  engine.servableContext(found),
                  found.parametersLabel()),
              engine,
              id);
        }));
  }

  @Override
  public List<ModelCatalog.Entry> all(String orgId) {
    Path dir = root.resolve(orgId);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    List<ModelCatalog.Entry> all = new ArrayList<>();
    try (Stream<Path> models = Files.list(dir)) {
      models
          .map(path -> path.getFileName().toString())
          .sorted()
          .forEach(id -> find(orgId, id).ifPresent(all::add));
    } catch (IOException e) {
      LOG.warn("cannot list the uploaded models of {}: {}", orgId, e.toString());
    }
    return all;
  }

  private Path modelDir(String orgId, String modelId) {
    return root.resolve(orgId).resolve(modelId);
  }

  public long bytesUsed(String orgId) {
    Path dir = root.resolve(orgId);
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(Files::isRegularFile)
          .mapToLong(file -> file.toFile().length())
          .sum();
    } catch (IOException e) {
      throw storageFailure(e);
    }
  }

  private Path createStaging() {
    try {
      Files.createDirectories(staging);
      return Files.createTempDirectory(staging, "upload-");
    } catch (IOException e) {
      throw storageFailure(e);
    }
  }

  static ApiException storageFailure(IOException e) {
    LOG.error("model storage failed: {}", e.toString());
    return ApiException.insufficientStorage(
        "The model could not be stored (the server's model directory is full or not writable)");
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      LOG.warn("could not delete {}: {}", dir, e.toString());
    }
  }

  @Override
  public void close() {
    for (ModelCatalog.Entry entry : known.values()) {
      ((LocalEngine) entry.engine()).close();
    }
  }

  /** Copies a part to a file, telling a failed read (the client) from a failed write (the disk). */
  static long copy(InputStream from, Path to, long maxBytes, Supplier<ApiException> tooLarge) {
    byte[] buffer = new byte[64 * 1024];
    long total = 0;
    try (OutputStream out = Files.newOutputStream(to)) {
      while (true) {
        int n = read(from, buffer);
        if (n < 0) {
          return total;
        }
        total += n;
        if (total > maxBytes) {
          throw tooLarge.get();
        }
        out.write(buffer, 0, n);
      }
    } catch (IOException e) {
      throw storageFailure(e);
    }
  }

  private static int read(InputStream from, byte[] buffer) {
    try {
      return from.read(buffer);
    } catch (IOException e) {
      throw ApiException.badRequest(null, "The upload could not be read: " + e.getMessage());
    }
  }
}
