package io.engram.inference.call;

import io.engram.instances.storage.ConversationHistory;

/**
 * Keeps each answered exchange (an engine's or the cache's) in the organization's conversation
 * history, its default instance, unless the organization turned CONVERSATION_HISTORY off: the
 * client's messages (not the memory block Engram added) or prompt, the answer and its tokens.
 */
final class HistoryStage implements Stage {
  private final ConversationHistory history;

  HistoryStage(ConversationHistory history) {
    this.history = history;
  }

  @Override
  public Ended intercept(Chain chain) {
    Ended ended = chain.proceed(chain.sink());
    ModelCall call = chain.call();
    if (ended.outcome() == null || call.config() == null || !keeps(call)) {
      return ended;
    }
    String answer = ended.answer();
    history.record(
        call.caller().organization(),
        new ConversationHistory.Answered(
            call.caller().credentialId(),
            call.origin().endUser(),
            call.requestId(),
            call.modelId(),
            call.sent(),
            answer == null ? "" : answer,
            ended.charged().promptTokens(),
            ended.charged().completionTokens(),
            call.memoryTokens()));
    return ended;
  }

  private static boolean keeps(ModelCall call) {
    return Boolean.parseBoolean(call.config().variable("CONVERSATION_HISTORY").orElse("true"));
  }
}
