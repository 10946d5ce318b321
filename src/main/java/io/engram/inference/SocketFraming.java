package io.engram.inference;

import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import java.util.List;
import java.util.Map;

/**
 * How one of the two WebSocket protocols frames an inference: which messages ask for one, and
 * what the client receives for each piece of text, at the end and on an error. {@link ChatSockets}
 * runs the connection; a framing only writes frames.
 */
interface SocketFraming {

  /** True when the upgrade request's {@code Authorization} header may authenticate the connection. */
  boolean acceptsHeaderAuth();

  /** True when a message of this {@code type} (null when absent) asks for an inference. */
  boolean asksForInference(String type);

  /** What to tell a client whose message after auth is not an inference. */
  String notAnInference();

  /** The frame for one piece of generated text, or null when this request gets none. */
  String piece(Replies.Header header, ChatRequest chat, String text, boolean first);

  /** The frames that end an inference, in order; the last one frees the connection. */
  List<String> end(Replies.Header header, ChatRequest chat, ModelCall prepared, Outcome outcome);

  /** An error frame around the OpenAI error body {@code {error: {...}}}. */
  String error(Map<String, Object> openAiBody);
}
