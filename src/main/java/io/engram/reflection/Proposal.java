package io.engram.reflection;

import java.util.Map;

/**
 * One change the planner found worth making: to which memory (and which other memory it concerns,
 * if any), why, and what the memory looked like when planned and should look like after.
 */
record Proposal(
    ChangeKind change,
    String memoryId,
    String relatedMemoryId,
    String reason,
    Map<String, Object> before,
    Map<String, Object> after) {}
