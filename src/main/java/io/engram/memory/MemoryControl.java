package io.engram.memory;

import io.engram.access.Principal;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;

/**
 * The control actions of a memory's state machine (reinforce, suppress, forget...) and edits, in
 * the caller's boundary, and the organization's memory settings (write mode, near duplicates,
 * time to live per kind) that its owners and admins set.
 */
public final class MemoryControl {
  private final MemoryStore store;
  private final MemoryHistory history;
  private final MemorySettingsStore settingsStore;
  private final ChangeLog changeLog;
  private final MemoryIndex index;
  private final Embedder embedder;
  private final StateChanges changes;
  private final Clock clock;

  public MemoryControl(MemoryStores stores, MemoryIndex index, Embedder embedder, Clock clock) {
    this.store = stores.memories();
    this.history = stores.history();
    this.settingsStore = stores.settings();
    this.changeLog = stores.changeLog();
    this.index = index;
    this.embedder = embedder;
    this.changes = new StateChanges(stores);
    this.clock = clock;
  }

  /** The caller's reason and actor label for a control action; both optional. */
  public record Control(String reason, String actor) {
    public static final Control NONE = new MemoryControl.Control(null, null);
  }

  /** Applies a control action of the state machine to a memory the boundary can see. */
  public MemoryRecord act(
      Principal caller,
      AgentScope scope,
      String id,
      MemoryAction action,
      Control control,
      String requestId) {
    StateChanges.Outcome outcome = store
        .database()
        .write(h -> changes.apply(
            h,
            caller.orgId(),
            id,
            action,
            control,
            ChangeAuthor.of(caller, requestId),
            clock.instant(),
            found -> {
              MemoryRecord memory = found
                  .filter(m -> scope.sees(m))
                  .orElseThrow(() -> MemoryReads.notFound(id, scope));
              if (action.changesContent() && !scope.owns(memory)) {
                throw ApiException.forbidden(
                    "shared_memory",
                    "Memory " + id + " is organization-wide; only a call at "
                        + "the organization level may " + action.id() + " it");
              }
              return memory;
            }));
    if (outcome.change() != 0) {
      index.makeVisible(id, outcome.change());
    }
    return outcome.after();
  }

  /**
   * Edits what a memory says (a partial update). Only the boundary that owns it may (an agent
   * cannot rewrite an organization-wide memory); a forgotten memory cannot be edited. A new text
   * or subject is embedded again and the index follows; the edit is a transition in the memory's
   * provenance, with what it said before.
   */
  public MemoryRecord edit(
      Principal caller, AgentScope scope, String id, MemoryEdit edit, String requestId) {
    MemoryRecord current = store
        .find(caller.orgId(), id)
        .filter(scope::sees)
        .orElseThrow(() -> MemoryReads.notFound(id, scope));
    if (!scope.owns(current)) {
      throw ApiException.forbidden(
          "shared_memory",
          "Memory " + id + " is organization-wide; only a call at the organization level may "
              + "edit it");
    }
    if (current.state() == MemoryState.TOMBSTONED) {
      throw ApiException.conflict(
          "memory_forgotten", "Memory " + id + " was forgotten; write a new one instead");
    }
    Instant now = clock.instant();
    MemoryRecord preview = current.edited(edit, null, now);
    float[] embedding = edit.changesIndexedText()
        ? embedder.embedMemory(preview.indexedText())
        : current.embedding();
    MemoryRecord edited = current.edited(edit, embedding, now);
    long change = store.database().write(h -> {
      MemoryRecord locked = store.findForUpdate(h, caller.orgId(), id).orElseThrow();
      if (!locked.updatedAt().equals(current.updatedAt())) {
        throw ApiException.conflict(
            "concurrent_update", "Memory " + id + " changed while it was edited; read it again");
      }
      store.updateContent(h, edited, now);
      history.recordTransition(
          h,
          new Transition(
              id,
              current.state(),
              current.state(),
              "edit",
              "was: " + abbreviated(current.text()),
              null,
              caller.credentialId(),
              ChangeAuthor.userId(caller),
              requestId,
              now));
      return changeLog.append(h, id, now);
    });
    index.makeVisible(id, change);
    return edited;
  }

  private static String abbreviated(String text) {
    return text.length() <= 500 ? text : text.substring(0, 500) + "...";
  }

  /** The write mode in force: candidate review only where the plan allows it (a downgrade falls back to direct). */
  public WriteMode writeMode(Organization org) {
    return settings(org).writeMode();
  }

  /** The organization's memory settings; below a paid plan encodes write directly whatever it set. */
  public MemorySettingsStore.Settings settings(Organization org) {
    return settingsStore.settings(org.id()).inForceFor(org);
  }

  /** Sets what the organization's encodes do with near duplicates (its owners and admins). */
  public NearDuplicates setNearDuplicates(Principal caller, NearDuplicates near) {
    requireManager(caller, "what encodes do with near duplicates");
    settingsStore.setNearDuplicates(
        caller.orgId(),
        near,
        writeMode(caller.organization()),
        caller.credentialId(),
        clock.instant());
    return near;
  }

  /** Sets the organization's default time to live per memory kind (its owners and admins). */
  public Map<MemoryKind, java.time.Duration> setTtlByKind(
      Principal caller, Map<MemoryKind, java.time.Duration> ttls) {
    requireManager(caller, "how long memories of each kind live");
    settingsStore.setTtlByKind(
        caller.orgId(),
        ttls,
        writeMode(caller.organization()),
        caller.credentialId(),
        clock.instant());
    return ttls;
  }

  private static void requireManager(Principal caller, String what) {
    if (!caller.managesOrganization()) {
      throw ApiException.forbidden(
          "insufficient_permissions",
          "Only an organization owner or admin (or an admin API key) may change " + what);
    }
  }

  public WriteMode setWriteMode(Principal caller, WriteMode mode) {
    requireManager(caller, "the memory write mode");
    if (mode == WriteMode.CANDIDATE_REVIEW && !caller.organization().plan().isPaid()) {
      throw ApiException.forbidden(
          "plan_required",
          "The candidate review path needs a paid plan; the "
              + caller.organization().plan().id() + " plan writes memories directly");
    }
    settingsStore.setWriteMode(caller.orgId(), mode, caller.credentialId(), clock.instant());
    return mode;
  }
}
