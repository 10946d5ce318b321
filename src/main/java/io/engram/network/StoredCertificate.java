package io.engram.network;

import java.time.Instant;
import java.util.List;

/** A certificate an organization uploaded; its private key stays sealed here. */
public record StoredCertificate(
    String id,
    String orgId,
    String subject,
    List<String> names,
    Instant notBefore,
    Instant notAfter,
    String fingerprint,
    String keyType,
    String chainPem,
    String sealedKey,
    Instant createdAt) {}
