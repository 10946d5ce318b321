package io.engram.inference;

import io.engram.inference.engine.ForwardingSink;
import io.engram.inference.engine.TokenSink;
import io.javalin.http.Context;

/**
 * A sink that shows, in the response's headers, which deployment answered a routed model's
 * request and on which attempt ({@code X-Engram-Deployment}, {@code X-Engram-Attempts}): told
 * before the answer begins, so a stream carries them too.
 */
final class DeploymentHeaders extends ForwardingSink {
  static final String DEPLOYMENT = "X-Engram-Deployment";
  static final String ATTEMPTS = "X-Engram-Attempts";

  private final Context ctx;

  private DeploymentHeaders(Context ctx, TokenSink sink) {
    super(sink);
    this.ctx = ctx;
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
    super.answeredBy(deployment, attempts);
  }
}
