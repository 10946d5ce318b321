package io.engram.reflection;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.WireNames;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ValidationError;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * An organization's reflection settings: whether runs are scheduled and how often, and each
 * process's switch and thresholds. Stored as JSON; a PATCH is merged into the current settings and
 * the whole result validated, every problem reported at once. docs/reflection.md explains each
 * threshold and its default.
 */
public record ReflectionSettings(
    boolean enabled,
    int intervalMinutes,
    Consolidation consolidation,
    Decay decay,
    Candidates candidates,
    Conflicts conflicts) {

  public static final int MIN_INTERVAL_MINUTES = 15;
  public static final int MAX_INTERVAL_MINUTES = 43_200;

  /** Near-duplicates on one subject merged when their similarity reaches the threshold. */
  public record Consolidation(boolean enabled, double similarityThreshold) {}

  /** What decay does to a memory whose activation stayed below the threshold. */
  public enum DecayAction {
    FLAG,
    SUPPRESS;

    String id() {
      return WireNames.of(this);
    }
  }

  /** Memories below {@code activationThreshold} (normalized) for {@code belowForDays} are flagged stale or suppressed. */
  public record Decay(
      boolean enabled, double activationThreshold, int belowForDays, DecayAction action) {}

  /**
   * Candidates promoted when a durable memory corroborates them or their confidence reaches
   * {@code autoApproveConfidence} (null: never on confidence alone); expired after
   * {@code expireAfterDays} unreviewed (null: never).
   */
  public record Candidates(
      boolean enabled,
      double corroborationThreshold,
      Double autoApproveConfidence,
      Integer expireAfterDays) {}

  /** Contradictions on one subject flagged for review, among memories at least this similar. */
  public record Conflicts(boolean enabled, double minSimilarity) {}

  public static final ReflectionSettings DEFAULTS = new ReflectionSettings(
      true,
      1_440,
      new Consolidation(true, 0.95),
      new Decay(true, 0.2, 30, DecayAction.FLAG),
      new Candidates(true, 0.9, 0.95, 30),
      new Conflicts(true, 0.6));

  /** The settings as the routes show and the database stores them. */
  public Map<String, Object> view() {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("enabled", enabled);
    view.put("intervalMinutes", intervalMinutes);
    view.put(
        "consolidation",
        ordered(
            "enabled",
            consolidation.enabled(),
            "similarityThreshold",
            consolidation.similarityThreshold()));
    Map<String, Object> decayView =
        ordered("enabled", decay.enabled(), "activationThreshold", decay.activationThreshold());
    decayView.put("belowForDays", decay.belowForDays());
    decayView.put("action", decay.action().id());
    view.put("decay", decayView);
    Map<String, Object> candidatesView = ordered(
        "enabled",
        candidates.enabled(),
        "corroborationThreshold",
        candidates.corroborationThreshold());
    candidatesView.put("autoApproveConfidence", candidates.autoApproveConfidence());
    candidatesView.put("expireAfterDays", candidates.expireAfterDays());
    view.put("candidates", candidatesView);
    view.put(
        "conflicts",
        ordered("enabled", conflicts.enabled(), "minSimilarity", conflicts.minSimilarity()));
    return view;
  }

  private static Map<String, Object> ordered(String k1, Object v1, String k2, Object v2) {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put(k1, v1);
    map.put(k2, v2);
    return map;
  }

  public String json() {
    return Json.write(view());
  }

  /** Stored settings; anything missing (written by an older version) takes its default. */
  static ReflectionSettings fromJson(String json) {
    Reader reader = new Reader(Json.read(json, ObjectNode.class));
    ReflectionSettings settings = reader.settings();
    if (!reader.errors.isEmpty()) {
      throw new IllegalStateException("stored reflection settings are invalid: " + reader.errors);
    }
    return settings;
  }

  /** These settings with a PATCH body merged in; a 400 listing every invalid field otherwise. */
  ReflectionSettings patched(ObjectNode patch) {
    ObjectNode merged = Json.MAPPER.valueToTree(view());
    List<ValidationError> errors = new ArrayList<>();
    merge(merged, patch, "", errors);
    Reader reader = new Reader(merged);
    ReflectionSettings settings = reader.settings();
    errors.addAll(reader.errors);
    if (!errors.isEmpty()) {
      throw ApiException.validation(errors);
    }
    return settings;
  }

  /** Merges {@code patch} into {@code target}: objects field by field, anything else replaced; unknown fields refused. */
  private static void merge(
      ObjectNode target, ObjectNode patch, String prefix, List<ValidationError> errors) {
    for (Iterator<Map.Entry<String, JsonNode>> fields = patch.properties().iterator();
        fields.hasNext(); ) {
      Map.Entry<String, JsonNode> field = fields.next();
      String path = prefix + field.getKey();
      JsonNode current = target.get(field.getKey());
      if (current == null) {
        errors.add(new ValidationError(null, path, "Unknown setting '" + path + "'"));
      } else if (current.isObject()) {
        if (field.getValue().isObject()) {
          merge((ObjectNode) current, (ObjectNode) field.getValue(), path + ".", errors);
        } else {
          errors.add(new ValidationError(null, path, "'" + path + "' must be an object"));
        }
      } else {
        target.set(field.getKey(), field.getValue());
      }
    }
  }

  /** Reads and checks a whole settings object, collecting errors; defaults fill what is missing. */
  private static final class Reader {
    private final ObjectNode root;
    private final List<ValidationError> errors = new ArrayList<>();

    Reader(ObjectNode root) {
      this.root = root;
    }

    ReflectionSettings settings() {
      ReflectionSettings d = DEFAULTS;
      JsonNode c = section("consolidation");
      JsonNode y = section("decay");
      JsonNode v = section("candidates");
      JsonNode f = section("conflicts");
      return new ReflectionSettings(
          bool(root, "enabled", d.enabled()),
          (int) number(
              root,
              "intervalMinutes",
              MIN_INTERVAL_MINUTES,
              MAX_INTERVAL_MINUTES,
              d.intervalMinutes(),
              true,
              false),
          new Consolidation(
              bool(c, "consolidation.enabled", d.consolidation().enabled()),
              number(
                  c,
                  "consolidation.similarityThreshold",
                  0.8,
                  1.0,
                  d.consolidation().similarityThreshold(),
                  false,
                  false)),
          new Decay(
              bool(y, "decay.enabled", d.decay().enabled()),
              number(
                  y,
                  "decay.activationThreshold",
                  0.01,
                  0.99,
                  d.decay().activationThreshold(),
                  false,
                  false),
              (int) number(y, "decay.belowForDays", 1, 3650, d.decay().belowForDays(), true, false),
              decayAction(y)),
          new Candidates(
              bool(v, "candidates.enabled", d.candidates().enabled()),
              number(
                  v,
                  "candidates.corroborationThreshold",
                  0.5,
                  1.0,
                  d.candidates().corroborationThreshold(),
                  false,
                  false),
              nullable(
                  v,
                  "candidates.autoApproveConfidence",
                  0.0,
                  1.0,
                  false,
                  d.candidates().autoApproveConfidence()),
              nullableDays(v, "candidates.expireAfterDays", d.candidates().expireAfterDays())),
          new Conflicts(
              bool(f, "conflicts.enabled", d.conflicts().enabled()),
              number(
                  f,
                  "conflicts.minSimilarity",
                  0.3,
                  0.99,
                  d.conflicts().minSimilarity(),
                  false,
                  false)));
    }

    private JsonNode section(String name) {
      JsonNode node = root.get(name);
      if (node == null) {
        return Json.MAPPER.createObjectNode();
      }
      checkKnown(node, name);
      return node;
    }

    private void checkKnown(JsonNode node, String name) {
      Set<String> known = switch (name) {
        case "consolidation" -> Set.of("enabled", "similarityThreshold");
        case "decay" -> Set.of("enabled", "activationThreshold", "belowForDays", "action");
        case "candidates" ->
          Set.of("enabled", "corroborationThreshold", "autoApproveConfidence", "expireAfterDays");
        default -> Set.of("enabled", "minSimilarity");
      };
      node.fieldNames().forEachRemaining(field -> {
        if (!known.contains(field)) {
          errors.add(new ValidationError(
              null, name + "." + field, "Unknown setting '" + name + "." + field + "'"));
        }
      });
    }

    private boolean bool(JsonNode parent, String path, boolean fallback) {
      JsonNode node = parent.get(leaf(path));
      if (node == null) {
        return fallback;
      }
      if (!node.isBoolean()) {
        errors.add(new ValidationError(null, path, "'" + path + "' must be true or false"));
        return fallback;
      }
      return node.booleanValue();
    }

    private double number(
        JsonNode parent,
        String path,
        double min,
        double max,
        double fallback,
        boolean integer,
        boolean nullAllowed) {
      JsonNode node = parent.get(leaf(path));
      if (node == null || (nullAllowed && node.isNull())) {
        return fallback;
      }
      boolean ok = integer ? node.isIntegralNumber() : node.isNumber();
      if (!ok || node.doubleValue() < min || node.doubleValue() > max) {
        errors.add(new ValidationError(
            null,
            path,
            "'" + path + "' must be " + (integer ? "an integer" : "a number") + " from "
                + format(min) + " to " + format(max)
                + (nullAllowed ? ", or null to turn it off" : "")));
        return fallback;
      }
      return node.doubleValue();
    }

    /** A number that null turns off; absent means {@code fallback}. */
    private Double nullable(
        JsonNode parent, String path, double min, double max, boolean integer, Double fallback) {
      JsonNode node = parent.get(leaf(path));
      if (node == null) {
        return fallback;
      }
      if (node.isNull()) {
        return null;
      }
      // An invalid value is reported; what is returned then is never used.
      return number(parent, path, min, max, fallback == null ? min : fallback, integer, true);
    }

    private Integer nullableDays(JsonNode parent, String path, Integer fallback) {
      Double days =
          nullable(parent, path, 1, 3650, true, fallback == null ? null : fallback.doubleValue());
      return days == null ? null : days.intValue();
    }

    private DecayAction decayAction(JsonNode parent) {
      JsonNode node = parent.get("action");
      if (node == null) {
        return DEFAULTS.decay().action();
      }
      Optional<DecayAction> action =
          WireNames.parse(DecayAction.class, node.isTextual() ? node.textValue() : null);
      if (action.isPresent()) {
        return action.get();
      }
      errors.add(
          new ValidationError(null, "decay.action", "'decay.action' must be 'flag' or 'suppress'"));
      return DEFAULTS.decay().action();
    }

    private static String leaf(String path) {
      return path.substring(path.lastIndexOf('.') + 1);
    }

    private static String format(double value) {
      return value == Math.rint(value) ? String.valueOf((long) value) : String.valueOf(value);
    }
  }
}
