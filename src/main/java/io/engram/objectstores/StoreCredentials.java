package io.engram.objectstores;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.auth.oauth2.ServiceAccountCredentials;
import io.engram.platform.config.ObjectStoreEndpoints;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a connection request names, checked field by field (400 naming the field), split into
 * what may be shown ({@code settings}) and what is sealed ({@code secret}); and the store that
 * such a connection opens.
 */
record StoreCredentials(
    ObjectStoreProvider provider,
    String bucket,
    Map<String, String> settings,
    Map<String, String> secret) {
  private static final String GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token";
  private static final int MAX_SERVICE_ACCOUNT_BYTES = 16 * 1024;

  static StoreCredentials parse(ObjectStoreProvider provider, JsonBody body) {
    return switch (provider) {
      case S3 -> s3(body);
      case GCS -> gcs(body);
      case AZURE -> azure(body);
    };
  }

  private static StoreCredentials s3(JsonBody body) {
    body.allowOnly(Set.of("bucket", "region", "access_key_id", "secret_access_key"));
    String bucket =
        field(body, "bucket", "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", "an S3 bucket name");
    String region =
        field(body, "region", "^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$", "a region (us-east-1)");
    String keyId = field(body, "access_key_id", "^[A-Za-z0-9+/=_-]{3,128}$", "an access key id");
    String secret = field(body, "secret_access_key", "^\\S{1,256}$", "a secret access key");
    return new StoreCredentials(
        ObjectStoreProvider.S3,
        bucket,
        Map.of("region", region, "access_key_id", mask(keyId)),
        Map.of("access_key_id", keyId, "secret_access_key", secret));
  }

  private static StoreCredentials gcs(JsonBody body) {
    body.allowOnly(Set.of("bucket", "project_id", "credentials"));
    String bucket =
        field(body, "bucket", "^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$", "a Cloud Storage bucket name");
    String project =
        field(body, "project_id", "^[a-z][a-z0-9-]{4,28}[a-z0-9]$", "a Google Cloud project id");
    String encoded = body.requiredString("credentials", 4 * MAX_SERVICE_ACCOUNT_BYTES / 3 + 4);
    byte[] document;
    try {
      document = Base64.getDecoder().decode(encoded.strip());
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(
          "credentials", "'credentials' is a base64-encoded service-account JSON document");
    }
    JsonNode account;
    try {
      account = Json.MAPPER.readTree(document);
    } catch (IOException e) {
      account = null;
    }
    if (account == null
        || !account.isObject()
        || !"service_account".equals(account.path("type").asText())
        || !account.path("client_email").isTextual()
        || !account.path("private_key").isTextual()) {
      throw ApiException.badRequest(
          "credentials",
          "'credentials' is a service-account key (type service_account, client_email,"
              + " private_key)");
    }
    return new StoreCredentials(
        ObjectStoreProvider.GCS,
        bucket,
        Map.of(
            "project_id", project, "client_email", account.get("client_email").asText()),
        Map.of("credentials", new String(document, StandardCharsets.UTF_8)));
  }

  private static StoreCredentials azure(JsonBody body) {
    body.allowOnly(Set.of("account_name", "container", "access_key"));
    String account = field(body, "account_name", "^[a-z0-9]{3,24}$", "a storage account name");
    String container =
        field(body, "container", "^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$", "a container name");
    String key = field(body, "access_key", "^[A-Za-z0-9+/]{8,256}={0,2}$", "a base64 account key");
    return new StoreCredentials(
        ObjectStoreProvider.AZURE,
        container,
        Map.of("account_name", account),
        Map.of("access_key", key));
  }

  /**
   * The addresses the store's client calls: its endpoint (the operator's, or the provider's
   * public one) and, for Cloud Storage, the token address of the service account.
   */
  List<URI> destinations(ObjectStoreEndpoints endpoints) {
    return switch (provider) {
      case S3 ->
        List.of(endpoints
            .s3Endpoint()
            .orElseGet(() -> URI.create(
                "https://" + bucket + ".s3." + settings.get("region") + ".amazonaws.com")));
      case GCS -> {
        List<URI> uris = new java.util.ArrayList<>();
        uris.add(URI.create(endpoints.gcsEndpoint().orElse("https://storage.googleapis.com")));
        JsonNode tokenUri = Json.read(secret.get("credentials"), JsonNode.class).get("token_uri");
        uris.add(URI.create(tokenUri == null ? GOOGLE_TOKEN_URI : tokenUri.asText()));
        yield uris;
      }
      case AZURE -> List.of(URI.create(endpoints.azureEndpoint(settings.get("account_name"))));
    };
  }

  /** Opens the store these credentials name. */
  ObjectStore open(ObjectStoreEndpoints endpoints) {
    return switch (provider) {
      case S3 ->
        new S3ObjectStore(
            bucket,
            settings.get("region"),
            secret.get("access_key_id"),
            secret.get("secret_access_key"),
            endpoints.s3Endpoint());
      case GCS ->
        new GcsObjectStore(
            bucket,
            settings.get("project_id"),
            serviceAccount(secret.get("credentials"), endpoints),
            endpoints.gcsEndpoint());
      case AZURE ->
        new AzureObjectStore(
            endpoints.azureEndpoint(settings.get("account_name")),
            settings.get("account_name"),
            bucket,
            secret.get("access_key"));
    };
  }

  /**
   * The service account. Its token address is the document's own; unless the operator points
   * Cloud Storage elsewhere, it must be Google's, so a crafted document cannot make the server
   * post signed assertions to any host it names.
   */
  private static ServiceAccountCredentials serviceAccount(
      String document, ObjectStoreEndpoints endpoints) {
    JsonNode tokenUri = Json.read(document, JsonNode.class).get("token_uri");
    if (tokenUri != null
        && !GOOGLE_TOKEN_URI.equals(tokenUri.asText())
        && endpoints.gcsEndpoint().isEmpty()) {
      throw ApiException.badRequest(
          "credentials", "The service account's token_uri must be " + GOOGLE_TOKEN_URI);
    }
    try {
      return ServiceAccountCredentials.fromStream(
          new ByteArrayInputStream(document.getBytes(StandardCharsets.UTF_8)));
    } catch (IOException | RuntimeException e) {
      throw ApiException.badRequest(
          "credentials", "The service-account key cannot be read: " + e.getMessage());
    }
  }

  private static String field(JsonBody body, String name, String pattern, String what) {
    String value = body.requiredString(name, 4096);
    if (!value.matches(pattern)) {
      throw ApiException.badRequest(name, "'" + name + "' is " + what);
    }
    return value;
  }

  /** Enough of an access key id to tell two apart, not enough to use one. */
  private static String mask(String keyId) {
    return keyId.length() <= 8
        ? "****"
        : keyId.substring(0, 4) + "****" + keyId.substring(keyId.length() - 4);
  }
}
