package io.engram.memory;

import java.util.Map;
import java.util.Objects;

/**
 * The boundary a memory call runs in: the organization (agent null) or one agent. Inside an agent,
 * a call reads that agent's memories and the organization-wide ones, and changes only the agent's
 * own (reinforcing a shared memory it used is allowed: that changes no content). At the
 * organization level a call reads and changes organization-wide memories only; an agent's
 * memories are reached through that agent's boundary. docs/memory.md has the whole table.
 */
public record AgentScope(String agent) {
  public static final AgentScope ORGANIZATION = new AgentScope(null);

  public boolean isOrganization() {
    return agent == null;
  }

  /** Retrieval and reads: the boundary's own memories plus organization-wide ones. */
  public boolean sees(String memoryAgent) {
    return memoryAgent == null || memoryAgent.equals(agent);
  }

  /** Content changes (suppress, delete, review): only the boundary's own memories. */
  public boolean owns(String memoryAgent) {
    return Objects.equals(memoryAgent, agent);
  }

  /** SQL condition selecting the rows this boundary owns; bind with {@link #sqlBindings()}. */
  String sqlCondition(String column) {
    return agent == null ? column + " IS NULL" : column + " = :scopeAgent";
  }

  Map<String, Object> sqlBindings() {
    return agent == null ? Map.of() : Map.of("scopeAgent", agent);
  }

  public String describe() {
    return agent == null ? "the organization-wide memory" : "agent '" + agent + "'";
  }
}
