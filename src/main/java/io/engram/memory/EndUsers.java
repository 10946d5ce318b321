package io.engram.memory;

import io.engram.access.EndUserId;
import io.engram.access.Principal;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.javalin.http.Context;

/**
 * Which end user of the organization's app a memory call is for, and which session it comes from.
 * The user is named by the body's {@code userId}, the {@code userId} query parameter or the
 * {@value #HEADER} header (in chat, also OpenAI's {@code user} field), and a token bound to an end
 * user is that user whether it names one or not: naming another is 403. A session only says where
 * a memory came from and narrows a search; it is no boundary of its own.
 */
public final class EndUsers {
  public static final String HEADER = "X-Engram-User";
  public static final String USER_FIELD = "userId";
  public static final String SESSION_FIELD = "sessionId";
  public static final int MAX_ID = EndUserId.MAX;

  private EndUsers() {}

  /**
   * The boundary narrowed to the end user the request names in its query or header, or the one
   * the caller's token is bound to.
   */
  static AgentScope of(Context ctx, Principal caller, AgentScope scope) {
    String fromQuery = ctx.queryParam(USER_FIELD);
    String header = ctx.header(HEADER);
    String fromHeader = header == null || header.isBlank() ? null : header.strip();
    return resolve(scope, caller, named(fromQuery, USER_FIELD, fromHeader, HEADER));
  }

  /**
   * The boundary narrowed by a body's {@code userId} as well (which must agree with the query and
   * header when they name one too).
   */
  public static AgentScope withBody(AgentScope scope, Principal caller, JsonBody body) {
    return withNamed(scope, caller, exactId(body, USER_FIELD), USER_FIELD);
  }

  /**
   * A body's id field as sent, checked: never stripped, so two ids that differ only by a space or
   * a control character at one end can never become the same user.
   */
  private static String exactId(JsonBody body, String field) {
    if (!body.has(field)) {
      return null;
    }
    com.fasterxml.jackson.databind.JsonNode value = body.get(field);
    if (!value.isTextual()) {
      throw ApiException.badRequest(field, "'" + field + "' must be a string");
    }
    check(value.asText(), field);
    return value.asText();
  }

  /**
   * The boundary narrowed to the end user a request's {@code field} names (null: none), which must
   * agree with the one its query or header named: in chat, OpenAI's {@code user}.
   */
  public static AgentScope withNamed(
      AgentScope scope, Principal caller, String named, String field) {
    if (named == null) {
      return scope;
    }
    if (caller.endUser() == null) {
      // A bound token's user is no name the request gave: naming another is a 403, not a clash.
      named(named, field, scope.user(), HEADER + " or the userId parameter");
    }
    return resolve(scope, caller, named, field);
  }

  /**
   * The boundary for the end user {@code named} (null: none named; then the token's own, if it is
   * bound to one).
   */
  static AgentScope resolve(AgentScope scope, Principal caller, String named) {
    return resolve(scope, caller, named, USER_FIELD);
  }

  private static AgentScope resolve(
      AgentScope scope, Principal caller, String named, String field) {
    String bound = caller.endUser();
    if (named == null) {
      return bound == null ? scope : scope.forUser(bound);
    }
    check(named, field);
    if (bound != null && !bound.equals(named)) {
      throw ApiException.forbidden(
          "user_not_allowed",
          "This token is bound to end user '" + bound + "' and cannot act for '" + named + "'");
    }
    return scope.forUser(named);
  }

  /** The body's {@code sessionId}, checked; null when absent. */
  public static String session(JsonBody body) {
    return exactId(body, SESSION_FIELD);
  }

  /** A {@code sessionId} from a query parameter or a header, checked; null when absent. */
  public static String session(String value, String param) {
    if (value == null || value.isEmpty()) {
      return null;
    }
    check(value, param);
    return value;
  }

  private static String named(String first, String firstName, String second, String secondName) {
    if (first != null && second != null && !first.equals(second)) {
      throw ApiException.badRequest(
          firstName,
          "'" + firstName + "' names end user '" + first + "' but " + secondName + " names '"
              + second + "'");
    }
    return first != null ? first : second;
  }

  private static void check(String id, String param) {
    EndUserId.check(id, param);
  }
}
