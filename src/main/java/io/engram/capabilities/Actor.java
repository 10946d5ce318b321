package io.engram.capabilities;

import io.engram.access.Principal;
import io.engram.platform.WireNames;

/**
 * Who made a change: the kind of credential, its id (API key or session) and the signed-in user,
 * if any. Recorded with every capability version so history answers "who changed what".
 */
public record Actor(String kind, String credentialId, String userId) {

  public static Actor of(Principal principal) {
    return new Actor(
        WireNames.of(principal.kind()),
        principal.credentialId(),
        principal.user() == null ? null : principal.user().id());
  }
}
