package io.engram.inference.engine;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A sink that hands everything on to another: the base of the sinks that watch a generation on
 * its way (to note what reached the client, which deployment answered, when the answer began)
 * and override only what they watch.
 */
public abstract class ForwardingSink implements TokenSink {
  protected final TokenSink sink;

  protected ForwardingSink(TokenSink sink) {
    this.sink = sink;
  }

  @Override
  public void begin() {
    sink.begin();
  }

  @Override
  public void answeredBy(String deployment, int attempts) {
    sink.answeredBy(deployment, attempts);
  }

  @Override
  public void text(String piece) {
    sink.text(piece);
  }

  @Override
  public void onClientGone(Runnable abort) {
    sink.onClientGone(abort);
  }

  @Override
  public void toolCalls(JsonNode deltas) {
    sink.toolCalls(deltas);
  }

  @Override
  public void choice(JsonNode choice) {
    sink.choice(choice);
  }
}
