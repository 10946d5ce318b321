package io.engram.platform.http;

import com.fasterxml.jackson.annotation.JsonInclude;

/** One failed rule of a validation response; {@code capabilityId} names the capability at fault, if any. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ValidationError(String capabilityId, String field, String error) {}
