package io.engram.platform.net;

/**
 * An outbound connection the organization's firewall refuses. The message names the destination
 * and the rule (its position and text), so whoever reads the failure knows what to change.
 */
public final class OutboundBlocked extends RuntimeException {
  private final int ruleNumber;

  public OutboundBlocked(String message, int ruleNumber) {
    super(message);
    this.ruleNumber = ruleNumber;
  }

  /** The refusing rule's position, counted from 1; 0 when the default refused. */
  public int ruleNumber() {
    return ruleNumber;
  }
}
