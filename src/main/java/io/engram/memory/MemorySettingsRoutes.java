package io.engram.memory;

import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * /api/memory/settings: the organization's memory write mode. Anyone signed in to the organization
 * (or any of its API keys) reads it; owners, admins and admin API keys change it, and only on a
 * paid plan can they choose the candidate review path.
 */
public final class MemorySettingsRoutes implements RouteModule {
  static final String PATH = "/api/memory/settings";

  private final MemoryService memory;
  private final long maxBodyBytes;

  public MemorySettingsRoutes(MemoryService memory, long maxBodyBytes) {
    this.memory = memory;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(PATH, Requires.signedIn(), ctx -> Responses.json(ctx, view(Access.caller(ctx), null)))
        .patch(PATH, Requires.signedIn(), ctx -> {
          Principal caller = Access.caller(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("writeMode"));
          String id = body.requiredString("writeMode", 32);
          WriteMode mode = WriteMode.fromId(id)
              .orElseThrow(() -> ApiException.badRequest(
                  "writeMode", "'writeMode' must be direct or candidate_review, got '" + id + "'"));
          memory.setWriteMode(caller, mode);
          Responses.json(ctx, view(caller, "Memory write mode set to " + mode.id()));
        });
  }

  private Map<String, Object> view(Principal caller, String message) {
    boolean paid = caller.organization().plan().isPaid();
    Map<String, Object> settings = new LinkedHashMap<>();
    settings.put("writeMode", memory.writeMode(caller.organization()).id());
    settings.put(
        "availableWriteModes",
        paid
            ? List.of(WriteMode.DIRECT.id(), WriteMode.CANDIDATE_REVIEW.id())
            : List.of(WriteMode.DIRECT.id()));
    settings.put("plan", caller.organization().plan().id());
    settings.put("idempotencyRetentionHours", MemoryService.IDEMPOTENCY_RETENTION.toHours());
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("settings", settings);
    if (message != null) {
      body.put("message", message);
    }
    return body;
  }
}
