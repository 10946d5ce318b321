package io.engram.platform.config;

/** The spec's precedence, lowest first: a later layer overrides an earlier one. */
public enum SettingLayer {
  SYSTEM_DEFAULT,
  PLAN_DEFAULT,
  ORGANIZATION,
  INSTANCE,
  RUNTIME_OVERRIDE
}
