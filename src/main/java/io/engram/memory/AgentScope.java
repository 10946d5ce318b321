package io.engram.memory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The boundary a memory call runs in: the organization (agent null) or one agent, and within it
 * the organization's shared memories (user null) or one end user's. Inside an agent, a call reads
 * that agent's memories and the organization-wide ones, and changes only the agent's own
 * (reinforcing a shared memory it used is allowed: that changes no content). At the organization
 * level a call reads and changes organization-wide memories only; an agent's memories are reached
 * through that agent's boundary. An end user works the same way one level down: a call for user U
 * reads U's memories and the shared ones, never another user's, and changes only U's; a call for
 * no user reads and changes the shared ones. docs/memory.md has the whole table.
 */
public record AgentScope(String agent, String user) {
  public static final AgentScope ORGANIZATION = new AgentScope(null, null);

  public AgentScope(String agent) {
    this(agent, null);
  }

  public boolean isOrganization() {
    return agent == null;
  }

  /** This boundary for one end user (null: the shared memories). */
  public AgentScope forUser(String endUser) {
    return new AgentScope(agent, endUser);
  }

  /** Retrieval and reads: the boundary's own memories plus the shared ones above it. */
  public boolean sees(String memoryAgent, String memoryUser) {
    return (memoryAgent == null || memoryAgent.equals(agent))
        && (memoryUser == null || memoryUser.equals(user));
  }

  public boolean sees(MemoryRecord memory) {
    return sees(memory.agent(), memory.endUser());
  }

  /** Content changes (suppress, delete, review): only the boundary's own memories. */
  public boolean owns(String memoryAgent, String memoryUser) {
    return Objects.equals(memoryAgent, agent) && Objects.equals(memoryUser, user);
  }

  public boolean owns(MemoryRecord memory) {
    return owns(memory.agent(), memory.endUser());
  }

  /**
   * SQL condition selecting the rows this boundary owns (columns {@code agent} and {@code
   * end_user_id}); bind with {@link #sqlBindings()}.
   */
  String sqlCondition() {
    return (agent == null ? "agent IS NULL" : "agent = :scopeAgent")
        + (user == null ? " AND end_user_id IS NULL" : " AND end_user_id = :scopeUser");
  }

  Map<String, Object> sqlBindings() {
    Map<String, Object> bindings = new LinkedHashMap<>();
    if (agent != null) {
      bindings.put("scopeAgent", agent);
    }
    if (user != null) {
      bindings.put("scopeUser", user);
    }
    return bindings;
  }

  public String describe() {
    String where = agent == null ? "the organization-wide memory" : "agent '" + agent + "'";
    return user == null ? where : "end user '" + user + "' of " + where;
  }
}
