package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.TokenSink;
import io.javalin.http.Context;

/**
 * A sink that shows, in the response's headers, which deployment answered a routed model's
 * request and on which attempt ({@code X-Engram-Deployment}, {@code X-Engram-Attempts}): told
 * before the answer begins, so a stream carries them too.
 */
final class DeploymentHeaders implements TokenSink {
  static final String DEPLOYMENT = "X-Engram-Deployment";
  static final String ATTEMPTS = "X-Engram-Attempts";

  private final Context ctx;
  private final TokenSink sink;

  private DeploymentHeaders(Context ctx, TokenSink sink) {
    this.ctx = ctx;
    this.sink = sink;
  }

  static TokenSink around(Context ctx, TokenSink sink) {
    return new DeploymentHeaders(ctx, sink);
  }

  @Override
  public void answeredBy(String deployment, int attempts) {
    if (!ctx.res().isCommitted()) {
      ctx.header(DEPLOYMENT, deployment);
      ctx.header(ATTEMPTS, String.valueOf(attempts));
    }
    sink.answeredBy(deployment, attempts);
  }

  @Override
  public void begin() {
    sink.begin();
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
