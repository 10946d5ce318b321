package io.engram.platform.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.Marker;

/**
 * LOG_LEVEL per organization: while a request of an organization that set its own level is
 * handled (the {@code org_id} of the logging context), that level decides what is logged, above or
 * below the server's own. An organization at DEBUG gets its requests' debug lines; one at ERROR
 * keeps even its access lines out of the log.
 */
public final class OrganizationLogLevels extends TurboFilter {
  /**
   * The logging context key that names the organization of the request being handled; kept out
   * of the JSON lines, where the access log writes {@code org_id} itself.
   */
  public static final String ORGANIZATION = "engram.org";

  private static final Map<String, Level> LEVELS = new ConcurrentHashMap<>();

  /** Sets the organization's level (one of LOG_LEVEL's values), or removes it with null. */
  public static void set(String orgId, String level) {
    if (level == null) {
      LEVELS.remove(orgId);
    } else {
      LEVELS.put(orgId, LoggingSetup.level(level));
    }
  }

  /** Adds the filter to the logging context once (a context reset removes it: call again). */
  public static void install() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context
        && context.getTurboFilterList().stream()
            .noneMatch(OrganizationLogLevels.class::isInstance)) {
      OrganizationLogLevels filter = new OrganizationLogLevels();
      filter.setContext(context);
      filter.start();
      context.addTurboFilter(filter);
    }
  }

  @Override
  public FilterReply decide(
      Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (LEVELS.isEmpty()) {
      return FilterReply.NEUTRAL;
    }
    String org = MDC.get(ORGANIZATION);
    Level wanted = org == null ? null : LEVELS.get(org);
    if (wanted == null) {
      return FilterReply.NEUTRAL;
    }
    return level.isGreaterOrEqual(wanted) ? FilterReply.ACCEPT : FilterReply.DENY;
  }
}
