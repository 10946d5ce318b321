package io.engram.inference;

import io.engram.inference.engine.ClientGoneException;
import io.javalin.http.Context;
import jakarta.servlet.ServletOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A Server-Sent Events response written straight to the connection: each event is flushed as it
 * is written (no Content-Length, chunked), and a comment line goes out whenever the stream has
 * been silent for the keep-alive interval, so proxies and clients do not give up on a slow model.
 * A failed write means the client left: it surfaces as {@link ClientGoneException}.
 */
final class EventStream implements AutoCloseable {
  private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.UTF_8);

  private final Context ctx;
  private final KeepAlives keepAlives;
  private ServletOutputStream out;
  private final ReentrantLock writing = new ReentrantLock();
  private final AtomicBoolean keepAliveRunning = new AtomicBoolean();
  private volatile long lastWrite;
  private volatile boolean gone;
  private volatile Runnable onGone = () -> {};

  EventStream(Context ctx, KeepAlives keepAlives) {
    this.ctx = ctx;
    this.keepAlives = keepAlives;
  }

  /** Sends the status and headers; from here on, failures are reported inside the stream. */
  void open() {
    ctx.status(200);
    ctx.res().setContentType("text/event-stream; charset=utf-8");
    ctx.res().setHeader("Cache-Control", "no-cache");
    ctx.res().setHeader("X-Accel-Buffering", "no");
    try {
      out = ctx.res().getOutputStream();
      out.flush();
    } catch (IOException e) {
      throw gone(e);
    }
    lastWrite = System.nanoTime();
    keepAlives.watch(this);
  }

  boolean isOpen() {
    return out != null;
  }

  void data(String json) {
    write(("data: " + json + "\n\n").getBytes(StandardCharsets.UTF_8));
  }

  /** A named event ({@code event:} line), as the Responses API's typed events are sent. */
  void event(String name, String json) {
    write(("event: " + name + "\ndata: " + json + "\n\n").getBytes(StandardCharsets.UTF_8));
  }

  void done() {
    data("[DONE]");
  }

  private void write(byte[] bytes) {
    writing.lock();
    try {
      writeLocked(bytes);
    } finally {
      writing.unlock();
    }
  }

  private void writeLocked(byte[] bytes) {
    if (gone) {
      throw new ClientGoneException(null);
    }
    try {
      out.write(bytes);
      out.flush();
      lastWrite = System.nanoTime();
    } catch (IOException e) {
      throw gone(e);
    }
  }

  /**
   * Runs on the timer thread every stream shares ({@link KeepAlives}), so it must never block
   * there: the write goes to a virtual thread, and is skipped while another write is in progress
   * (a slow reader is not silent, and a second write behind it would only wait too).
   */
  void keepAlive() {
    if (System.nanoTime() - lastWrite < keepAlives.interval().toNanos()
        || !keepAliveRunning.compareAndSet(false, true)) {
      return;
    }
    Thread.ofVirtual().name("sse-keepalive").start(() -> {
      try {
        if (writing.tryLock()) {
          try {
            writeLocked(KEEP_ALIVE);
          } finally {
            writing.unlock();
          }
        }
      } catch (ClientGoneException e) {
        onGone.run();
      } finally {
        keepAliveRunning.set(false);
      }
    });
  }

  /** What to do when a keep-alive finds the client gone while the generating thread waits. */
  void onGone(Runnable action) {
    this.onGone = action;
  }

  private ClientGoneException gone(IOException e) {
    gone = true;
    return new ClientGoneException(e);
  }

  @Override
  public void close() {
    keepAlives.forget(this);
  }
}
