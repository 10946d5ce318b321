package io.engram.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A test class whose time goes mostly to other processes (servers started as the operator starts
 * them, Solr nodes, HAProxy) and to waiting for them: it runs beside the other classes, on the
 * second core, one such class at a time (they share one lock), its own tests in order. Everything
 * it uses must be its own: ports from the system, fresh schemas, its own directories.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock("engram:processes-beside-the-rest")
public @interface BesideTheRest {}
