package io.engram.inference.models;

/**
 * A model as the model routes describe it. {@code parameters} (a parameter-count label such as
 * "1.2B") is shown on the extended surface only; it is null when unknown (a remote model).
 */
public record ModelCard(
    String id, long created, String ownedBy, int contextLength, String parameters) {}
