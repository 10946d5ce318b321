package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import java.util.Optional;

/**
 * A partial update of a memory ({@code PATCH /v1/memory/{id}}), a JSON merge patch: the fields
 * given replace the memory's, {@code null} clears the optional ones ({@code subject},
 * {@code metadata}), fields left out stay. Each field is bounded as on encode.
 */
public record MemoryEdit(
    Optional<String> text,
    Optional<Optional<String>> subject,
    Optional<MemoryKind> kind,
    Optional<Double> confidence,
    Optional<Optional<String>> metadataJson) {

  public static MemoryEdit parse(ObjectNode patch) {
    for (String required : new String[] {"text", "memoryKind", "confidence"}) {
      if (patch.has(required) && patch.get(required).isNull()) {
        throw ApiException.badRequest(
            required, "'" + required + "' cannot be cleared; leave it out to keep it");
      }
    }
    Optional<Optional<String>> subject = cleared(patch, "subject");
    Optional<Optional<String>> metadata = cleared(patch, "metadata");
    JsonBody body = JsonBody.received(patch);
    body.allowOnly(java.util.Set.of("text", "subject", "memoryKind", "confidence", "metadata"));
    if (patch.isEmpty() && subject.isEmpty() && metadata.isEmpty()) {
      throw ApiException.badRequest(
          null, "Nothing to change: send text, subject, memoryKind, confidence or metadata");
    }
    return new MemoryEdit(
        body.optionalString("text", MemoryInput.MAX_TEXT),
        subject.isPresent()
            ? subject
            : body.optionalString("subject", MemoryInput.MAX_SUBJECT).map(Optional::of),
        body.optionalString("memoryKind", 64).map(MemoryInput::kind),
        body.optionalNumber("confidence", 0, 1),
        metadata.isPresent()
            ? metadata
            : Optional.ofNullable(MemoryInput.metadata(body)).map(Optional::of));
  }

  /** {@code Optional.of(Optional.empty())} for a field sent as null (and removes it from the patch). */
  private static Optional<Optional<String>> cleared(ObjectNode patch, String field) {
    JsonNode value = patch.get(field);
    if (value != null && value.isNull()) {
      patch.remove(field);
      return Optional.of(Optional.empty());
    }
    return Optional.empty();
  }

  /** Whether the indexed text (subject and text) changes, so the memory is embedded again. */
  boolean changesIndexedText() {
    return text.isPresent() || subject.isPresent();
  }
}
