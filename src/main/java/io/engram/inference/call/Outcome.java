package io.engram.inference.call;

import io.engram.inference.engine.Generation;

/** What a client gets of a generation: the generation and the usage it is told of. */
public record Outcome(Generation generation, Generation.Usage usage) {}
