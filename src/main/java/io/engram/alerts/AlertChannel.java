package io.engram.alerts;

import java.net.URI;
import java.time.Instant;

/** Where an organization's alerts go: a webhook URL, signed with the channel's own secret. */
public record AlertChannel(
    String id, String orgId, String kind, URI url, Instant createdAt, String createdBy) {}
