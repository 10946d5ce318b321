package io.engram.capabilities;

import io.engram.platform.WireNames;
import java.util.Optional;

/** The two kinds of assistant: one shared by the organization, or one employee's own. */
public enum AssistantType {
  ORG_SHARED,
  EMPLOYEE_PERSONAL;

  /**
   * One description of the spec's registry filter names {@code organization_wide}; it is read as
   * {@code org_shared} wherever a type is a filter, never stored (docs/capabilities.md).
   */
  static final String ORGANIZATION_WIDE_ALIAS = "organization_wide";

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<AssistantType> fromId(String id) {
    return WireNames.parse(AssistantType.class, id);
  }

  /** As {@link #fromId}, also accepting the {@code organization_wide} alias. */
  public static Optional<AssistantType> fromFilter(String id) {
    return ORGANIZATION_WIDE_ALIAS.equals(id) ? Optional.of(ORG_SHARED) : fromId(id);
  }
}
