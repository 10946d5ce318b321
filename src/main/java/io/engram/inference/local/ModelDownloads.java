package io.engram.inference.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MODEL_AUTO_DOWNLOAD: the server's DEFAULT_MODEL, when it is a Hugging Face repository id
 * ({@code owner/name}) that nothing else serves, is fetched at start-up from the Hub (HF_ENDPOINT,
 * a mirror's address as huggingface_hub reads it; HF_TOKEN for a gated model) into {@code
 * MODEL_CACHE_DIR/owner/name}, then served in-process like any model there.
 *
 * <p>Only the operator's DEFAULT_MODEL is fetched, never a model a request names: a client must not
 * be able to make the server download gigabytes. The files go to a directory of their own and are
 * moved into place whole once they make a model, so a stopped download is never served half.
 * MAX_MODEL_SIZE_GB, when the operator set it, bounds the bytes fetched.
 */
public final class ModelDownloads {
  private static final Logger LOG = LoggerFactory.getLogger(ModelDownloads.class);
  private static final Pattern REPOSITORY =
      Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}");
  private static final String WEIGHTS = "model.safetensors";
  private static final String WEIGHTS_INDEX = "model.safetensors.index.json";

  /** Why a model could not be fetched, in a sentence an operator acts on. */
  public static final class DownloadFailed extends RuntimeException {
    DownloadFailed(String message) {
      super(message);
    }
  }

  private final HttpClient client;
  private final URI endpoint;
  private final String token;
  private final OptionalLong maxBytes;

  public ModelDownloads(URI endpoint, String token, OptionalLong maxBytes) {
    this.client = HttpClient.newBuilder()
        .followRedirects(HttpClient.Redirect.NORMAL) // the Hub answers with its CDN's address
        .connectTimeout(Duration.ofSeconds(10))
        .build();
    this.endpoint = endpoint;
    this.token = token;
    this.maxBytes = maxBytes;
  }

  /** Whether an id names a Hub repository (owner/name) rather than a model of this server. */
  public static boolean isRepository(String id) {
    return id != null && REPOSITORY.matcher(id).matches() && !id.contains("..");
  }

  /**
   * The repository's model in {@code modelCacheDir/owner/name}, fetched when it is not there yet.
   */
  public LocalModels.Found fetch(String repository, Path modelCacheDir) {
    Path target = modelCacheDir.resolve(repository);
    var present = LocalModels.inspect(target, repository);
    if (present.isPresent()) {
      return present.get();
    }
    if (Files.exists(target)) {
      throw new DownloadFailed(target + " exists but is not a whole model (config.json, "
          + "tokenizer.json and its safetensors); remove it to download " + repository + " again");
    }
    Path staging = modelCacheDir
        .resolve(".downloads")
        .resolve(repository.replace('/', '-') + "-" + UUID.randomUUID());
    try {
      Files.createDirectories(staging);
      long started = System.nanoTime();
      long fetched = fetchFiles(repository, staging);
      var found = LocalModels.inspect(staging, repository)
          .orElseThrow(() -> new DownloadFailed("the files of " + repository + " from "
              + endpoint + " do not make a model the in-process engine serves (config.json "
              + "with model_type and max_position_embeddings, tokenizer.json, safetensors)"));
      Files.createDirectories(target.getParent());
      Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
      LOG.info(
          "model {} downloaded from {}: {} MB in {} s",
          repository,
          endpoint,
          fetched / 1_000_000,
          (System.nanoTime() - started) / 1_000_000_000);
      return LocalModels.inspect(target, repository).orElse(found);
    } catch (IOException e) {
      throw new DownloadFailed(
          "model " + repository + " could not be downloaded from " + endpoint + ": " + e);
    } finally {
      deleteQuietly(staging);
    }
  }

  private long fetchFiles(String repository, Path staging) throws IOException {
    long fetched = 0;
    fetched += fetch(repository, "config.json", staging, true, fetched);
    fetched += fetch(repository, "tokenizer.json", staging, true, fetched);
    fetched += fetch(repository, "tokenizer_config.json", staging, false, fetched);
    long weights = fetch(repository, WEIGHTS, staging, false, fetched);
    if (weights >= 0) {
      return fetched + weights;
    }
    // A model in several files: its index names them.
    fetched += fetch(repository, WEIGHTS_INDEX, staging, true, fetched);
    JsonNode index = Json.MAPPER.readTree(staging.resolve(WEIGHTS_INDEX).toFile());
    TreeSet<String> shards = new TreeSet<>();
    index.path("weight_map").forEach(file -> shards.add(file.asText()));
    if (shards.isEmpty()) {
      throw new DownloadFailed(WEIGHTS_INDEX + " of " + repository + " names no weight file");
    }
    for (String shard : shards) {
      if (!shard.matches("[A-Za-z0-9._-]+\\.safetensors")) {
        throw new DownloadFailed(
            WEIGHTS_INDEX + " of " + repository + " names '" + shard + "', not a file name");
      }
      fetched += fetch(repository, shard, staging, true, fetched);
    }
    return fetched;
  }

  /** One file into the staging directory: its bytes, or -1 when optional and absent. */
  private long fetch(String repository, String file, Path staging, boolean required, long before)
      throws IOException {
    URI uri = URI.create(
        endpoint.toString().replaceAll("/+$", "") + "/" + repository + "/resolve/main/" + file);
    HttpRequest.Builder request = HttpRequest.newBuilder(uri).GET();
    if (!token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<InputStream> response;
    try {
      response = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    try (InputStream body = response.body()) {
      int status = response.statusCode();
      if (status == 404 && !required) {
        return -1;
      }
      if (status == 401 || status == 403) {
        throw new DownloadFailed("the Hub at " + endpoint + " refused " + repository + "/" + file
            + " (" + status + "): a gated or private model needs HF_TOKEN, a token its owner "
            + "granted access");
      }
      if (status != 200) {
        throw new DownloadFailed("the Hub at " + endpoint + " answered " + status + " for "
            + repository + "/" + file + (status == 404 ? ": no such model or file" : ""));
      }
      return copy(body, staging.resolve(file), repository, before);
    }
  }

  private long copy(InputStream body, Path file, String repository, long before)
      throws IOException {
    long written = 0;
    byte[] buffer = new byte[1 << 16];
    try (OutputStream out = Files.newOutputStream(file)) {
      for (int read; (read = body.read(buffer)) >= 0; ) {
        written += read;
        if (maxBytes.isPresent() && before + written > maxBytes.getAsLong()) {
          throw new DownloadFailed("model " + repository + " is larger than MAX_MODEL_SIZE_GB ("
              + maxBytes.getAsLong() / 1_000_000_000L + " GB); not downloaded");
        }
        out.write(buffer, 0, read);
      }
    }
    return written;
  }

  private static void deleteQuietly(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      List<Path> all = new ArrayList<>(files.toList());
      java.util.Collections.reverse(all);
      for (Path path : all) {
        Files.deleteIfExists(path);
      }
    } catch (IOException | UncheckedIOException e) {
      LOG.warn("could not remove the partial download {}: {}", dir, e.toString());
    }
  }
}
