package io.engram.instances;

import io.engram.instances.files.FileStore;
import io.engram.instances.storage.ByteRange;
import io.engram.instances.storage.InstanceViews;
import io.engram.instances.storage.StorageLog;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoragePermissions;
import io.engram.instances.storage.StoredFile;
import io.engram.organizations.InstanceStore;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorType;
import io.engram.platform.http.FileBody;
import io.engram.platform.http.HttpServer;
import io.engram.platform.http.QueryParams;
import io.engram.platform.http.RefusedBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The file API of an instance's storage ({@code /v1/nano/{nano_id}/storage/files/{path}}): PUT
 * streams an upload in (atomic, checksummed, within the organization's allowance), GET streams it
 * out (with Range and ETag), HEAD tells its size and ETag, DELETE removes it; the folder route lists
 * by prefix, a page at a time. {@code /storage/logs} reads who did what.
 */
public final class FileRoutes implements RouteModule {
  private static final String FILES = "/v1/nano/{nano_id}/storage/files";
  private static final String FILE = FILES + "/<path>";
  private static final int MAX_PAGE = 1000;

  private final FileStore files;
  private final StorageLog log;
  private final InstanceStore instances;
  private final StoragePermissions permissions;
  private final Counter uploaded;
  private final Counter downloaded;

  public FileRoutes(
      FileStore files,
      StorageLog log,
      InstanceStore instances,
      StoragePermissions permissions,
      MeterRegistry registry) {
    this.permissions = permissions;
    this.uploaded = Counter.builder("engram.storage.transferred.bytes")
        .description("Bytes of instance files uploaded and downloaded")
        .tag("direction", "upload")
        .register(registry);
    this.downloaded = Counter.builder("engram.storage.transferred.bytes")
        .description("Bytes of instance files uploaded and downloaded")
        .tag("direction", "download")
        .register(registry);
    this.files = files;
    this.log = log;
    this.instances = instances;
  }

  @Override
  public void register(Routes routes) {
    routes
        .put(FILE, InstanceAccess.member(instances), this::put)
        .get(FILE, InstanceAccess.member(instances), ctx -> read(ctx, true))
        .head(FILE, InstanceAccess.member(instances), ctx -> read(ctx, false))
        .delete(FILE, InstanceAccess.member(instances), ctx -> {
          InstanceAccess access = fileAccess(ctx);
          StoragePath path = path(ctx);
          permissions.require(access.principal(), access.instanceId(), path.value(), true);
          files.delete(access.organization(), access.instanceId(), path, actor(ctx, access));
          ctx.status(204);
        })
        .get(FILES, InstanceAccess.member(instances), this::list)
        .get("/v1/nano/{nano_id}/storage/logs", InstanceAccess.admin(instances), ctx -> {
          InstanceAccess access = access(ctx);
          int limit = QueryParams.integer(ctx, "limit", 50, 1, StorageLog.MAX_PAGE);
          List<StorageLog.Entry> entries =
              log.page(access.instanceId(), ctx.queryParam("before"), limit + 1);
          String next = entries.size() > limit ? entries.get(limit - 1).id() : null;
          Responses.json(
              ctx,
              InstanceViews.page(
                  entries.stream().limit(limit).map(InstanceViews::logEntry).toList(), next));
        })
        .exposeHeaders("ETag", "Content-Range", "Accept-Ranges");
  }

  private void put(Context ctx) {
    InstanceAccess access = fileAccess(ctx);
    StoragePath path = path(ctx);
    permissions.require(access.principal(), access.instanceId(), path.value(), true);
    if (!path.dataClass().writableByFiles()) {
      throw ApiException.forbidden(
          "read_only_class",
          path.dataClass().wireName() + " is written by the gateway; it can be read, not written");
    }
    String encoding = ctx.header("Content-Encoding");
    if (encoding != null && !encoding.isBlank() && !encoding.strip().equalsIgnoreCase("identity")) {
      throw ApiException.unsupportedMediaType("identity", "Content-Encoding: " + encoding);
    }
    Optional<StoredFile> current = files.find(access.instanceId(), path.value());
    checkPreconditions(ctx, current);
    long declared = ctx.req().getContentLengthLong();
    StoredFile stored;
    boolean[] started = {false};
    try (InputStream body = new FilterInputStream(ctx.req().getInputStream()) {
      @Override
      public int read(byte[] buffer, int offset, int length) throws IOException {
        started[0] = true;
        return super.read(buffer, offset, length);
      }
    }) {
      stored = files.put(
          access.organization(),
          access.instanceId(),
          path,
          body,
          declared >= 0 ? OptionalLong.of(declared) : OptionalLong.empty(),
          ctx.contentType(),
          actor(ctx, access));
    } catch (ApiException e) {
      // Refused from its headers, a large body is not read to the end: the connection closes.
      RefusedBody.discard(ctx, started[0]);
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    uploaded.increment(stored.size());
    ctx.header("ETag", stored.etag());
    Responses.json(ctx, current.isPresent() ? 200 : 201, InstanceViews.file(stored));
  }

  /** If-Match and If-None-Match on a write: a conditional create or replace (412 when not met). */
  private static void checkPreconditions(Context ctx, Optional<StoredFile> current) {
    String ifMatch = ctx.header("If-Match");
    String ifNoneMatch = ctx.header("If-None-Match");
    boolean matchFails = ifMatch != null
        && (current.isEmpty()
            || !ifMatch.strip().equals("*") && !ifMatch.contains(current.get().etag()));
    boolean noneMatchFails = ifNoneMatch != null
        && current.isPresent()
        && (ifNoneMatch.strip().equals("*")
            || ifNoneMatch.contains(current.get().etag()));
    if (matchFails || noneMatchFails) {
      throw ApiException.preconditionFailed(
          "The file " + (current.isPresent() ? "is at " + current.get().etag() : "does not exist")
              + ": the request's If-Match / If-None-Match does not hold");
    }
  }

  private void read(Context ctx, boolean withBody) {
    InstanceAccess access = fileAccess(ctx);
    StoragePath path = path(ctx);
    permissions.require(access.principal(), access.instanceId(), path.value(), false);
    StoredFile file = files.get(access.instanceId(), path);
    ctx.header("ETag", file.etag());
    ctx.header("Accept-Ranges", "bytes");
    ctx.header(
        "Last-Modified",
        java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
            file.updatedAt().atZone(java.time.ZoneOffset.UTC)));
    String ifNoneMatch = ctx.header("If-None-Match");
    if (ifNoneMatch != null
        && (ifNoneMatch.contains(file.etag()) || ifNoneMatch.strip().equals("*"))) {
      ctx.status(304);
      return;
    }
    ByteRange range;
    try {
      range = ByteRange.parse(ctx.header("Range"), file.size()).orElse(null);
    } catch (ByteRange.Unsatisfiable e) {
      ctx.header("Content-Range", "bytes */" + file.size());
      throw ApiException.of(
          416,
          ErrorType.INVALID_REQUEST_ERROR,
          "range_not_satisfiable",
          "The file has " + file.size() + " bytes: the requested range is outside it",
          null);
    }
    long first = range == null ? 0 : range.first();
    long length = range == null ? file.size() : range.length();
    if (range != null) {
      ctx.status(206);
      ctx.header(
          "Content-Range", "bytes " + range.first() + "-" + range.last() + "/" + file.size());
    }
    ctx.contentType(file.contentType() == null ? "application/octet-stream" : file.contentType());
    ctx.header("Content-Length", Long.toString(length));
    if (!withBody) {
      return;
    }
    if (!FileBody.send(ctx, files.bytes(file), first, length)) {
      return;
    }
    downloaded.increment(length);
    log.record(
        access.orgId(),
        access.instanceId(),
        access.principal().credentialId(),
        "read",
        path.value(),
        length,
        "ok",
        HttpServer.requestId(ctx));
  }

  private void list(Context ctx) {
    InstanceAccess access = fileAccess(ctx);
    String prefix = StoragePath.prefix(ctx.queryParam("prefix"));
    int limit = QueryParams.integer(ctx, "limit", 100, 1, MAX_PAGE);
    String after = ctx.queryParam("after");
    List<StoredFile> page = files.list(access.instanceId(), prefix, after, limit + 1);
    String next = page.size() > limit ? page.get(limit - 1).path() : null;
    // A signed-in user sees the files it may read; the page's cursor stays the folder's.
    Responses.json(
        ctx,
        InstanceViews.page(
            page.stream()
                .limit(limit)
                .filter(file ->
                    permissions.accessOf(access.principal(), access.instanceId(), file.path())
                        != StoragePermissions.Access.NONE)
                .map(InstanceViews::file)
                .toList(),
            next));
  }

  private static StoragePath path(Context ctx) {
    return StoragePath.of(ctx.pathParam("path"), "path");
  }

  private static FileStore.Actor actor(Context ctx, InstanceAccess access) {
    return new FileStore.Actor(access.principal().credentialId(), HttpServer.requestId(ctx));
  }

  private InstanceAccess access(Context ctx) {
    return InstanceAccess.of(ctx);
  }

  /** A file route: the organization's signed-in users reach it too, within their permissions. */
  private InstanceAccess fileAccess(Context ctx) {
    return InstanceAccess.of(ctx);
  }
}
