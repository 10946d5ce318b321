package io.engram.inference;

import io.engram.inference.engine.ClientGoneException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;

/**
 * Sends WebSocket text frames one at a time and waits for each to be written, so a client that
 * reads slowly slows the generation down rather than queueing frames in memory. A failed send, or
 * a closed connection, is {@link ClientGoneException}.
 */
final class FrameSender {
  private static final long SEND_TIMEOUT_SECONDS = 60;

  private final Session session;
  private volatile boolean gone;
  private volatile Runnable onGone = () -> {};

  FrameSender(Session session) {
    this.session = session;
  }

  synchronized void send(String text) {
    if (gone || !session.isOpen()) {
      throw new ClientGoneException(null);
    }
    Callback.Completable sent = new Callback.Completable();
    session.sendText(text, sent);
    try {
      sent.get(SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      gone();
      throw new ClientGoneException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ClientGoneException(e);
    }
  }

  void onGone(Runnable abort) {
    this.onGone = abort;
    if (gone) {
      abort.run();
    }
  }

  /** The connection closed: abort whatever is generating for it. */
  void gone() {
    gone = true;
    onGone.run();
  }
}
