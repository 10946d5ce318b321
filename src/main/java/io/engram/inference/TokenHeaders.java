package io.engram.inference;

import io.javalin.http.Context;

/** OpenAI's token budget headers, from the plan's tokens per hour (left out when unlimited). */
final class TokenHeaders {

  private TokenHeaders() {
  }

  static void write(Context ctx, InferenceLimits.TokenBudget budget) {
    if (budget == null) {
      return;
    }
    ctx.header("x-ratelimit-limit-tokens", String.valueOf(budget.limit()));
    ctx.header("x-ratelimit-remaining-tokens", String.valueOf(budget.remaining()));
    ctx.header("x-ratelimit-reset-tokens", budget.resetSeconds() + "s");
  }
}
