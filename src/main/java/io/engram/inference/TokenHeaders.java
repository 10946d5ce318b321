package io.engram.inference;

import io.engram.inference.usage.InferenceLimits;
import io.javalin.http.Context;
import java.util.List;

/** OpenAI's token budget headers, from the plan's tokens per hour (left out when unlimited). */
final class TokenHeaders {
  static final List<String> NAMES = List.of(
      "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens");

  private TokenHeaders() {}

  static void write(Context ctx, InferenceLimits.TokenBudget budget) {
    if (budget == null) {
      return;
    }
    ctx.header("x-ratelimit-limit-tokens", String.valueOf(budget.limit()));
    ctx.header("x-ratelimit-remaining-tokens", String.valueOf(budget.remaining()));
    ctx.header("x-ratelimit-reset-tokens", budget.resetSeconds() + "s");
  }
}
