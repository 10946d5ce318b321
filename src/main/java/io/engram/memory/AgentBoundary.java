package io.engram.memory;

import io.engram.access.AgentSlug;
import io.engram.access.Principal;
import io.engram.platform.http.ApiException;
import io.javalin.http.Context;

/**
 * Which boundary a request runs in, for every route that reads or writes memory (the memory
 * routes and the inference gateway): the agent named by the path, else by the
 * {@code X-Service-Agent} header, else the organization. A token bound to agents must name one of
 * them; naming another is 403. Within it, the end user the request names or its token is bound to
 * ({@link EndUsers}).
 */
public final class AgentBoundary {
  public static final String HEADER = "X-Service-Agent";

  private AgentBoundary() {}

  /**
   * @param pathParam the path parameter that names the agent on this route family
   * @param agentRoute the agent form of the route, quoted when a bound token names no agent
   */
  public static AgentScope of(Context ctx, Principal caller, String pathParam, String agentRoute) {
    String fromPath = ctx.pathParamMap().get(pathParam);
    String header = ctx.header(HEADER);
    String fromHeader = header == null || header.isBlank() ? null : header.strip();
    checkSlug(fromPath, pathParam);
    checkSlug(fromHeader, HEADER);
    if (fromPath != null && fromHeader != null && !fromPath.equals(fromHeader)) {
      throw ApiException.badRequest(
          HEADER,
          "The path names agent '" + fromPath + "' but " + HEADER + " names '" + fromHeader + "'");
    }
    AgentScope scope = resolve(
        fromPath != null ? fromPath : fromHeader,
        caller,
        "call " + agentRoute + " or send " + HEADER);
    return EndUsers.of(ctx, caller, scope);
  }

  /**
   * The boundary of a request that names {@code agent} (null: none), for callers without an HTTP
   * route such as WebSocket messages. {@code howToName} tells a bound token how to name one.
   */
  public static AgentScope resolve(String agent, Principal caller, String howToName) {
    if (agent == null) {
      if (caller.agents() != null) {
        throw ApiException.forbidden(
            "agent_required",
            "This token is bound to agents " + caller.agents() + "; " + howToName);
      }
      return EndUsers.resolve(AgentScope.ORGANIZATION, caller, null);
    }
    checkSlug(agent, "agent");
    if (!caller.canReachAgent(agent)) {
      throw ApiException.forbidden(
          "agent_not_allowed", "This token is not bound to agent '" + agent + "'");
    }
    return EndUsers.resolve(new AgentScope(agent), caller, null);
  }

  private static void checkSlug(String slug, String param) {
    if (slug != null && !AgentSlug.isValid(slug)) {
      throw ApiException.badRequest(
          param, "Agent '" + slug + "' is not a valid agent slug: " + AgentSlug.rule());
    }
  }
}
