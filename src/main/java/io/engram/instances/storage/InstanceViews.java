package io.engram.instances.storage;

import io.engram.organizations.Instance;
import io.engram.platform.json.Json;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON of instances, their files and their storage log. */
public final class InstanceViews {
  private InstanceViews() {}

  public static Map<String, Object> instance(Instance instance, boolean restartRequired) {
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

  public static Map<String, Object> file(StoredFile file) {
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

  public static Map<String, Object> logEntry(StorageLog.Entry entry) {
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
  public static Map<String, Object> page(List<?> data, String next) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "list");
    view.put("data", data);
    view.put("has_more", next != null);
    view.put("next", next);
    return view;
  }

  public static Long seconds(Instant at) {
    return at == null ? null : at.getEpochSecond();
  }

  /** One exchange of a conversation history: its usage, and with {@code whole} its messages. */
  public static Map<String, Object> exchange(ConversationHistory.Stored exchange, boolean whole) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "conversation.exchange");
    view.put("id", exchange.id());
    view.put("instance_id", exchange.instanceId());
    view.put("created_at", seconds(exchange.createdAt()));
    ConversationHistory.Answered answered = exchange.answered();
    view.put("model", answered.model());
    view.put("credential_id", answered.credentialId());
    view.put("request_id", answered.requestId());
    Map<String, Object> usage = new LinkedHashMap<>();
    usage.put("prompt_tokens", answered.promptTokens());
    usage.put("completion_tokens", answered.completionTokens());
    usage.put("memory_tokens", answered.memoryTokens());
    view.put("usage", usage);
    view.put("bytes", exchange.bytes());
    if (whole) {
      view.put("messages", Json.read(answered.messages(), Object.class));
      view.put("answer", answered.answer());
    }
    return view;
  }
}
