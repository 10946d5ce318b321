package io.engram.support;

import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.Sampling;
import io.engram.inference.engine.TokenSink;
import io.engram.inference.local.LocalEngine;
import java.util.List;
import java.util.function.Consumer;

/** One user message straight to an in-process engine (no gateway), its text to {@code pieces}. */
public final class LocalChats {
  private LocalChats() {}

  public static Generation generate(
      LocalEngine engine, String question, Sampling sampling, Consumer<String> pieces) {
    return engine.generate(
        new GenerationRequest(
            "m",
            List.of(new ChatMessage("user", question)),
            null,
            sampling,
            false,
            null,
            null,
            null,
            null,
            GenerationRequest.Share.WHOLE,
            false),
        new TokenSink() {
          @Override
          public void begin() {}

          @Override
          public void text(String piece) {
            pieces.accept(piece);
          }
        });
  }
}
