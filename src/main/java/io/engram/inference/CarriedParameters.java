package io.engram.inference;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.Carrying;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.Sampling;
import io.engram.inference.models.ModelCatalog;
import io.engram.platform.http.ApiException;
import java.util.List;

/**
 * Tool calling, structured output, several choices, log probabilities, logit bias and the
 * parameters passed on as sent reach a model only through an engine that carries them; for the
 * others they are refused by name, never dropped (unless the organization's DROP_PARAMS lets a
 * provider's API leave them out).
 */
final class CarriedParameters {
  private CarriedParameters() {}

  /** What a chat asks of its engine beyond the conversation and sampling, in one object. */
  static ObjectNode asked(ChatRequest chat) {
    if (chat.passedOn() == null) {
      return chat.tooling();
    }
    ObjectNode all = chat.passedOn().deepCopy();
    return chat.tooling() == null ? all : all.setAll(chat.tooling());
  }

  /**
   * A 400 unsupported_parameter naming the first thing the model's engine cannot carry out. A
   * routed model carries what one of its deployments can; each deployment is then asked when it is
   * about to be tried (RoutedEngine), and one that cannot is passed over, or sent the request
   * without it where the organization drops such parameters.
   */
  static void refuseWhatIsNotCarried(
      ModelCatalog.Entry model,
      ObjectNode asked,
      Sampling sampling,
      List<ChatMessage> messages,
      boolean dropsParameters) {
    Engine engine = model.engine();
    String param = Carrying.firstNotCarried(engine, sampling, asked, messages);
    if (param == null || engine.callsOut() && dropsParameters) {
      return;
    }
    if (engine.callsOut()) {
      throw ApiException.invalid(
          "unsupported_parameter",
          param,
          "The model '" + model.card().id() + "' cannot carry out '" + param + "' at this value "
              + "on any of its deployments' provider APIs; leave it out, or set the "
              + "organization's DROP_PARAMS variable to true to have such parameters dropped");
    }
    throw ApiException.invalid(
        "unsupported_parameter",
        param,
        "The model '" + model.card().id() + "' runs on the in-process engine, which does not "
            + "carry out '" + param + "' (it calls no tools, constrains its output to JSON "
            + "only as json_object, gives one choice without log probabilities or logit bias, "
            + "and takes no other parameter than the sampling ones); use a model served by a "
            + "provider");
  }
}
