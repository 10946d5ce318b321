package io.engram.support;

import java.lang.reflect.Method;
import java.security.SecureRandom;
import java.util.Random;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Randomized tests, reproducibly (as Lucene does): a test method asking for a {@link Random} gets
 * one seeded from the run's master seed and the method's name. The master seed is random unless
 * {@code -Dtests.seed=HEX} fixes it, and a failure names the seed to rerun it with.
 */
public final class Seeded implements ParameterResolver, TestExecutionExceptionHandler {
  private static final long MASTER = masterSeed();

  private static long masterSeed() {
    String fixed = System.getProperty("tests.seed");
    return fixed == null || fixed.isBlank()
        ? new SecureRandom().nextLong()
        : Long.parseUnsignedLong(fixed, 16);
  }

  /** The seed a method's Random starts from: the master seed mixed with the method's name. */
  static long seedOf(Method method) {
    long h = MASTER
        ^ (method.getDeclaringClass().getName() + "#" + method.getName()).hashCode()
            * 0x9E3779B97F4A7C15L;
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    return h ^ (h >>> 33);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == Random.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return new Random(seedOf(context.getRequiredTestMethod()));
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable failure)
      throws Throwable {
    AssertionError reported = new AssertionError(
        "Randomized test failed with master seed "
            + Long.toHexString(MASTER) + " (method seed "
            + Long.toHexString(seedOf(context.getRequiredTestMethod()))
            + "); rerun with -Dtests.seed=" + Long.toHexString(MASTER) + ": " + failure,
        failure);
    reported.setStackTrace(failure.getStackTrace());
    throw reported;
  }
}
