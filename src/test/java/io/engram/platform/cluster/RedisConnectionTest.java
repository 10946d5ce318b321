package io.engram.platform.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.engram.support.TestDatabases;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The node's Redis connection at its edges: a Redis that answers (commands, and messages between
 * connections), and one that accepts connections but never answers (a hung server), which must
 * cost one request the command timeout and the others nothing until it is tried again.
 */
class RedisConnectionTest {

  @Test
  void commandsAndMessagesGoThroughARedisThatAnswers() throws Exception {
    String url = TestDatabases.redisUrl();
    try (RedisConnection sender = new RedisConnection(url);
        RedisConnection receiver = new RedisConnection(url)) {
      String channel = "engram:test-" + UUID.randomUUID();
      BlockingQueue<String> received = new ArrayBlockingQueue<>(10);
      receiver.subscribe(channel, received::add);
      assertThat((String) sender.call(redis -> redis.ping())).isEqualTo("PONG");
      assertThat(sender.available()).isTrue();
      // The subscription is made by the receiver's own thread: publish until it hears.
      String heard = null;
      for (int i = 0; i < 50 && heard == null; i++) {
        sender.publish(channel, "revoked key_1");
        heard = received.poll(100, TimeUnit.MILLISECONDS);
      }
      assertThat(heard).isEqualTo("revoked key_1");
      assertThatThrownBy(() -> receiver.subscribe("other:channel", message -> {}))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void aRedisThatNeverAnswersCostsOneCommandItsTimeoutAndTheOthersNothing() throws Exception {
    try (HungServer hung = new HungServer();
        RedisConnection redis = new RedisConnection("redis://127.0.0.1:" + hung.port())) {
      long started = System.nanoTime();
      assertThatThrownBy(() -> redis.call(commands -> commands.ping()))
          .isInstanceOf(RedisUnavailableException.class);
      Duration first = Duration.ofNanos(System.nanoTime() - started);
      assertThat(first).isLessThan(RedisConnection.COMMAND_TIMEOUT.multipliedBy(4));
      assertThat(redis.available()).isFalse();

      // Within the retry spacing the next commands are refused at once, not sent.
      started = System.nanoTime();
      for (int i = 0; i < 20; i++) {
        assertThatThrownBy(() -> redis.call(commands -> commands.ping()))
            .isInstanceOf(RedisUnavailableException.class);
      }
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .isLessThan(RedisConnection.RETRY_SPACING);
      // Still away a second later (every retry and probe timed out): the readiness check and
      // engram_redis_unavailable_seconds count it.
      Thread.sleep(1_100);
      assertThat(redis.available()).isFalse();
      assertThat(redis.unavailableSeconds()).isGreaterThanOrEqualTo(1);
    }
  }

  @Test
  void aClosedConnectionRefusesCommandsAndDropsMessagesWithoutThrowingAtItsCallers() {
    RedisConnection redis = new RedisConnection(TestDatabases.redisUrl());
    redis.close();
    // What requests still in flight during a shutdown meet: the limits' local fallback, no error.
    redis.publish("engram:test-closed", "late");
    assertThatThrownBy(() -> redis.call(commands -> commands.ping()))
        .isInstanceOf(RedisUnavailableException.class);
  }

  /** Accepts connections and reads nothing, answers nothing: a Redis that hangs. */
  private static final class HungServer implements AutoCloseable {
    private final ServerSocket server = new ServerSocket(0);
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    HungServer() throws IOException {
      acceptor = Thread.ofPlatform().daemon().start(() -> {
        try {
          while (!server.isClosed()) {
            accepted.add(server.accept());
          }
        } catch (IOException closed) {
          // the test is over
        }
      });
    }

    int port() {
      return server.getLocalPort();
    }

    @Override
    public void close() throws Exception {
      server.close();
      for (Socket socket : accepted) {
        socket.close();
      }
      acceptor.join(1_000);
    }
  }
}
