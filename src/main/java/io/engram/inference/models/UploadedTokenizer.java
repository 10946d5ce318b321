package io.engram.inference.models;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * Where an upload's tokenizer comes from when the form has no {@code tokenizer} part (the spec's
 * form is only file, config, model_id and model_type): inside the weights, when {@code file} is a
 * zip archive of the model's files (its {@code .safetensors}, {@code tokenizer.json} and optionally
 * {@code tokenizer_config.json}, as a Hugging Face model folder zipped); or inside
 * {@code config.json}, under {@code tokenizer} (the tokenizer.json object) and optionally
 * {@code tokenizer_config}. Neither: a 400 that says the three ways.
 */
final class UploadedTokenizer {
  private static final byte[] ZIP = {'P', 'K', 3, 4};
  /** What an archive may unpack to in all, so a small archive cannot fill the disk. */
  private static final long MAX_UNPACKED = 64L * 1024 * 1024 * 1024;

  private UploadedTokenizer() {}

  /** Makes {@code dir} hold model.safetensors and tokenizer.json, from whichever way they came. */
  static void complete(Path dir, boolean tokenizerSent) {
    Path weights = dir.resolve("model.safetensors");
    if (isZip(weights)) {
      unpack(weights, dir, tokenizerSent);
    }
    if (Files.exists(dir.resolve("tokenizer.json"))) {
      return;
    }
    JsonNode config = readConfig(dir.resolve("config.json"));
    if (config != null && config.path("tokenizer").isObject()) {
      write(dir.resolve("tokenizer.json"), config.get("tokenizer"));
      if (config.path("tokenizer_config").isObject()
          && !Files.exists(dir.resolve("tokenizer_config.json"))) {
        write(dir.resolve("tokenizer_config.json"), config.get("tokenizer_config"));
      }
      // config.json keeps the model's configuration only, as the engine reads it.
      ((com.fasterxml.jackson.databind.node.ObjectNode) config)
          .remove(java.util.List.of("tokenizer", "tokenizer_config"));
      write(dir.resolve("config.json"), config);
      return;
    }
    throw ApiException.badRequest(
        UploadedModelCheck.TOKENIZER,
        "The model's tokenizer is needed: send it as the part 'tokenizer' (tokenizer.json), inside"
            + " 'file' as a zip archive of the model's files (its .safetensors and tokenizer.json),"
            + " or in config.json under 'tokenizer'");
  }

  private static boolean isZip(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] head = in.readNBytes(4);
      return java.util.Arrays.equals(head, ZIP);
    } catch (IOException e) {
      throw ModelUploads.storageFailure(e);
    }
  }

  /**
   * Unpacks the archive's weights (its one {@code .safetensors}), tokenizer.json and
   * tokenizer_config.json, by their names whatever folder they are in; nothing else is written.
   */
  private static void unpack(Path archive, Path dir, boolean tokenizerSent) {
    Path weights = dir.resolve("weights.unpacking");
    boolean found = false;
    long unpacked = 0;
    try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(archive))) {
      for (ZipEntry entry = zip.getNextEntry(); entry != null; entry = zip.getNextEntry()) {
        String name = entry.getName().substring(entry.getName().lastIndexOf('/') + 1);
        Path target;
        if (name.endsWith(".safetensors")) {
          if (found) {
            throw ApiException.badRequest(
                UploadedModelCheck.WEIGHTS,
                "The archive in 'file' holds more than one .safetensors file; one is served");
          }
          found = true;
          target = weights;
        } else if (!tokenizerSent
            && (name.equals("tokenizer.json") || name.equals("tokenizer_config.json"))) {
          target = dir.resolve(name);
        } else {
          continue;
        }
        unpacked += ModelUploads.copy(
            zip,
            target,
            MAX_UNPACKED - unpacked,
            () -> ApiException.badRequest(
                UploadedModelCheck.WEIGHTS, "The archive in 'file' unpacks to too much"));
      }
    } catch (IOException e) {
      throw ApiException.badRequest(
          UploadedModelCheck.WEIGHTS, "'file' is not a readable zip archive: " + e.getMessage());
    }
    if (!found) {
      throw ApiException.badRequest(
          UploadedModelCheck.WEIGHTS, "The archive in 'file' holds no .safetensors file");
    }
    try {
      Files.move(weights, archive, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw ModelUploads.storageFailure(e);
    }
  }

  private static JsonNode readConfig(Path config) {
    try {
      return Json.MAPPER.readTree(config.toFile());
    } catch (IOException e) {
      return null; // verify() names the part at fault
    }
  }

  private static void write(Path file, JsonNode value) {
    try {
      Files.writeString(file, Json.write(value));
    } catch (IOException e) {
      throw ModelUploads.storageFailure(e);
    }
  }
}
