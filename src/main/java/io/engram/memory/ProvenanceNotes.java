package io.engram.memory;

import java.util.Map;

/**
 * What other parts of the service add to a memory's provenance (reflection adds the changes its
 * runs made and the flags it raised), keyed by section name.
 */
@FunctionalInterface
public interface ProvenanceNotes {
  ProvenanceNotes NONE = (orgId, memoryId, scope) -> Map.of();

  /** Notes about the memory, naming no other memory the caller's boundary cannot see. */
  Map<String, Object> about(String orgId, String memoryId, AgentScope scope);
}
