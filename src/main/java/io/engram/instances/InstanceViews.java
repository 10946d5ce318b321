package io.engram.instances;

import io.engram.organizations.Instance;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON of instances, their files and their storage log. */
final class InstanceViews {
  private InstanceViews() {}

  static Map<String, Object> instance(Instance instance, boolean restartRequired) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "instance");
    view.put("id", instance.id());
    view.put("organization_id", instance.orgId());
    view.put("name", instance.name());
    view.put("status", instance.status().wireName());
    view.put("default", instance.isDefault());
    view.put("restart_required", restartRequired);
    view.put("created_at", seconds(instance.createdAt()));
    view.put("updated_at", seconds(instance.updatedAt()));
    view.put("restarted_at", seconds(instance.restartedAt()));
    return view;
  }

  static Map<String, Object> file(StoredFile file) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "storage.file");
    view.put("instance_id", file.instanceId());
    view.put("path", file.path());
    view.put("data_class", file.dataClass().wireName());
    view.put("bytes", file.size());
    view.put("sha256", file.sha256());
    view.put("content_type", file.contentType());
    view.put("created_at", seconds(file.createdAt()));
    view.put("updated_at", seconds(file.updatedAt()));
    return view;
  }

  static Map<String, Object> logEntry(StorageLog.Entry entry) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "storage.log_entry");
    view.put("id", entry.id());
    view.put("at", seconds(entry.at()));
    view.put("actor", entry.actor());
    view.put("action", entry.action());
    view.put("path", entry.path());
    view.put("bytes", entry.bytes());
    view.put("result", entry.result());
    view.put("request_id", entry.requestId());
    return view;
  }

  /** A page of a list: {@code next} is the cursor of the following page, null on the last one. */
  static Map<String, Object> page(List<?> data, String next) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "list");
    view.put("data", data);
    view.put("has_more", next != null);
    view.put("next", next);
    return view;
  }

  static Long seconds(Instant at) {
    return at == null ? null : at.getEpochSecond();
  }
}
