package io.engram.memory.transfer;

import io.engram.access.Principal;
import io.engram.memory.AgentScope;
import io.engram.memory.ChangeAuthor;
import io.engram.memory.ChangeLog;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryDigest;
import io.engram.memory.MemoryHistory;
import io.engram.memory.MemoryIndex;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemoryState;
import io.engram.memory.MemoryStore;
import io.engram.memory.MemoryStores;
import io.engram.memory.Transition;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ValidationError;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Memories written from JSON Lines, as an export writes them. Two passes: the first reads every
 * line from the request, checks it as an encode would ({@link ImportLine}) and spools it to disk;
 * a file with a mistake anywhere is refused whole, naming the lines (the first twenty), before
 * anything is written. The second writes the lines in batches, each batch one transaction with its
 * change log, then indexed.
 *
 * <p>Importing is idempotent: a memory keeps its id, and a line whose memory is already in the
 * organization is skipped, so a file sent again (after a cut connection) writes only what is
 * missing. An id another organization holds (the same export imported twice on one server) is
 * renamed, the same way every time ({@link Ids#renamed}), and so are references to it. A durable
 * line saying what a durable memory of the same boundary already says is skipped as a duplicate.
 * A vector exported from this model for this text is kept; otherwise the model runs.
 */
final class MemoryImport {
  private static final Logger LOG = LoggerFactory.getLogger(MemoryImport.class);
  /** The largest import one request takes; a bigger one is sent in parts (it resumes anyway). */
  static final long MAX_BYTES = 1L << 30;
  /** A line longer than this is no memory (the largest text and metadata take about 50 KB). */
  static final int MAX_LINE_BYTES = 1 << 20;

  private static final int BATCH = 200;
  /**
   * Batches between two refreshes of the index's searcher: each refresh costs about what indexing
   * a batch does, and a memory a running import wrote need not be searchable that very second.
   */
  private static final int REFRESH_BATCHES = 10;

  private static final int REPORTED_MISTAKES = 20;
  private static final int REPORTED_SKIPPED = 100;
  private static final int REPORTED_RENAMES = 1_000;

  /**
   * What an import did, line by line counted; {@code rejected} lines had mistakes and were
   * skipped ({@code errors}: the first hundred), when the import was asked to skip them.
   */
  record Summary(
      int lines,
      int rejected,
      List<ValidationError> errors,
      int imported,
      int alreadyPresent,
      int duplicates,
      int vectorsKept,
      int vectorsComputed,
      Map<String, String> renamed,
      int renamedCount,
      long millis) {}

  private final MemoryStore store;
  private final MemoryHistory history;
  private final ChangeLog changeLog;
  private final MemoryIndex index;
  private final Embedder embedder;
  private final Clock clock;
  private final io.engram.memory.MemoryWrites.WriteScreen screen;

  MemoryImport(
      MemoryStores stores,
      MemoryIndex index,
      Embedder embedder,
      io.engram.memory.MemoryWrites.WriteScreen screen,
      Clock clock) {
    this.screen = screen;
    this.store = stores.memories();
    this.history = stores.history();
    this.changeLog = stores.changeLog();
    this.index = index;
    this.embedder = embedder;
    this.clock = clock;
  }

  /**
   * Reads, checks and writes {@code body}: a line with a mistake refuses the whole import, or
   * with {@code skipMistakes} is left out and reported. {@code IOException}: the body broke off.
   */
  Summary run(
      Principal caller, AgentScope scope, InputStream body, String requestId, boolean skipMistakes)
      throws IOException {
    long started = System.nanoTime();
    Path spool = spoolFile();
    try {
      Checked checked = check(caller, scope, body, spool, requestId, skipMistakes);
      Summary summary = write(caller, scope, spool, requestId, checked, started);
      LOG.info(
          "imported {} memories into {} of organization {} ({} lines; {} already there, {}"
              + " duplicates, {} vectors kept, {} computed, {} ids renamed) in {} ms",
          summary.imported(),
          scope.describe(),
          caller.orgId(),
          summary.lines(),
          summary.alreadyPresent(),
          summary.duplicates(),
          summary.vectorsKept(),
          summary.vectorsComputed(),
          summary.renamedCount(),
          summary.millis());
      return summary;
    } finally {
      Files.deleteIfExists(spool);
    }
  }

  private static Path spoolFile() {
    try {
      return Files.createTempFile("engram-import-", ".jsonl");
    } catch (IOException e) {
      throw spoolFailed(e);
    }
  }

  private static ApiException spoolFailed(IOException e) {
    return ApiException.unavailable(
        "import_spool_failed",
        "The import could not be set aside on this server's disk (" + e.getMessage()
            + "); nothing was written, try again");
  }

  /** What the first pass found: lines read, and those refused (all of them counted). */
  private record Checked(int lines, int rejected, List<ValidationError> mistakes) {}

  /**
   * The first pass: every line checked and spooled (a line skipped for its mistake spooled as a
   * blank one, so the second pass numbers lines as the client's file does).
   */
  private Checked check(
      Principal caller,
      AgentScope scope,
      InputStream body,
      Path spool,
      String requestId,
      boolean skipMistakes)
      throws IOException {
    Instant now = clock.instant();
    List<ValidationError> mistakes = new ArrayList<>();
    int rejected = 0;
    int memories = 0;
    int number = 0;
    try (LineReader reader = new LineReader(new CappedStream(body, MAX_BYTES), MAX_LINE_BYTES);
        BufferedWriter out = Files.newBufferedWriter(spool, StandardCharsets.UTF_8)) {
      for (String line = reader.next(); line != null; line = reader.next()) {
        number++;
        String kept = line; // blank lines too: the second pass numbers lines as the file does
        try {
          if (!line.isBlank()
              && ImportLine.parse(line, number, caller, scope, requestId, now) != null) {
            memories++;
            kept = screened(caller, line, number);
          }
        } catch (ApiException e) {
          if (e.status() == 403) {
            throw e; // the token may not write there at all: no list of lines helps
          }
          rejected++;
          if (mistakes.size() < (skipMistakes ? REPORTED_SKIPPED : REPORTED_MISTAKES)) {
            mistakes.add(new ValidationError(null, e.param(), e.getMessage()));
          }
          kept = ""; // left out, as a blank line
        }
        try {
          out.write(kept);
          out.write('\n');
        } catch (IOException e) {
          throw spoolFailed(e);
        }
      }
    } catch (LineReader.TooLong e) {
      throw ApiException.badRequest(
          ImportLine.lineParam(e.line(), null),
          "line " + e.line() + " is longer than " + MAX_LINE_BYTES + " bytes");
    } catch (LineReader.NotUtf8 e) {
      throw ApiException.badRequest(
          ImportLine.lineParam(e.line(), null), "line " + e.line() + " is not valid UTF-8");
    } catch (CappedStream.TooLarge e) {
      throw ApiException.tooLarge(
          "An import takes at most " + MAX_BYTES + " bytes; send the file in parts");
    }
    if (rejected > 0 && (!skipMistakes || memories == 0)) {
      throw ApiException.validation(mistakes);
    }
    if (memories == 0) {
      throw ApiException.badRequest(
          null,
          "The body holds no memory: send JSON Lines, one memory per line, as an export"
              + " writes them");
    }
    return new Checked(number, rejected, mistakes);
  }

  /**
   * The line as the organization's memory_write guardrails let it be imported: its text redacted
   * (and its exported vector dropped, computed again from what is stored), or a mistake of the
   * line naming the guardrail that blocks it.
   */
  private String screened(Principal caller, String line, int number) {
    com.fasterxml.jackson.databind.node.ObjectNode node = io.engram.platform.json.Json.read(
        line, com.fasterxml.jackson.databind.node.ObjectNode.class);
    String text = node.path("text").asText();
    String screenedText;
    try {
      screenedText = screen.screened(caller, text);
    } catch (ApiException blocked) {
      throw blocked.withMessage(
          "line " + number + ": " + blocked.getMessage(), ImportLine.lineParam(number, "text"));
    }
    if (screenedText.equals(text)) {
      return line;
    }
    node.put("text", screenedText);
    node.remove("embedding");
    return io.engram.platform.json.Json.write(node);
  }

  private Summary write(
      Principal caller,
      AgentScope scope,
      Path spool,
      String requestId,
      Checked checked,
      long started)
      throws IOException {
    Tally tally = new Tally();
    Instant now = clock.instant();
    List<ImportLine> batch = new ArrayList<>();
    int number = 0;
    int batches = 0;
    try (LineReader reader = new LineReader(Files.newInputStream(spool), MAX_LINE_BYTES)) {
      for (String line = reader.next(); line != null; line = reader.next()) {
        number++;
        ImportLine parsed =
            line.isBlank() ? null : ImportLine.parse(line, number, caller, scope, requestId, now);
        if (parsed != null) {
          batch.add(parsed);
        }
        if (batch.size() == BATCH) {
          writeBatch(caller, batch, requestId, tally);
          batch.clear();
          if (++batches % REFRESH_BATCHES == 0) {
            refresh(tally);
          }
        }
      }
    }
    if (!batch.isEmpty()) {
      writeBatch(caller, batch, requestId, tally);
    }
    refresh(tally);
    LOG.info(
        "import into organization {}: model {} ms, database {} ms, index {} ms",
        caller.orgId(),
        tally.embedNanos / 1_000_000,
        tally.writeNanos / 1_000_000,
        tally.indexNanos / 1_000_000);
    return new Summary(
        checked.lines(),
        checked.rejected(),
        checked.mistakes(),
        tally.imported,
        tally.present,
        tally.duplicates,
        tally.kept,
        tally.computed,
        tally.renamed,
        tally.renamedCount,
        (System.nanoTime() - started) / 1_000_000);
  }

  private static final class Tally {
    int imported;
    int present;
    int duplicates;
    int kept;
    int computed;
    int renamedCount;
    final Map<String, String> renamed = new LinkedHashMap<>();
    /** Where the time went (the log line says it): the model, the database, the index. */
    long embedNanos;

    long writeNanos;
    long indexNanos;
  }

  /** One memory of a batch, as it will be written: its final id and what it supersedes. */
  private record Planned(ImportLine line, String id, String supersedes) {}

  /** A memory written and its change log entry. */
  private record Written(MemoryRecord memory, long change) {}

  /**
   * Writes a batch in one transaction. Run twice at most: a concurrent import of the same lines
   * that committed first makes the insert fail, and the second run skips what it wrote.
   */
  private void writeBatch(Principal caller, List<ImportLine> batch, String requestId, Tally tally) {
    try {
      writeOnce(caller, batch, requestId, tally);
    } catch (org.jdbi.v3.core.statement.UnableToExecuteStatementException e) {
      writeOnce(caller, batch, requestId, tally);
    }
  }

  private void writeOnce(Principal caller, List<ImportLine> batch, String requestId, Tally tally) {
    String orgId = caller.orgId();
    List<Planned> planned = plan(orgId, batch);
    Set<String> present = new HashSet<>(store
        .database()
        .read(h ->
            store.organizationsOf(h, planned.stream().map(Planned::id).toList()).keySet()));
    List<Planned> fresh = new ArrayList<>();
    for (Planned p : planned) {
      // A line repeated in the file (or two lines without id saying the same) is the memory its
      // first occurrence writes: present by then, not a second insert of one id.
      if (!present.add(p.id())) {
        tally.present++;
      } else {
        fresh.add(p);
      }
    }
    List<String> toEmbed = fresh.stream()
        .filter(p -> p.line().memory().embedding() == null)
        .map(p -> p.line().memory().indexedText())
        .toList();
    long started = System.nanoTime();
    List<float[]> computed = toEmbed.isEmpty() ? List.of() : embedder.embedAll(toEmbed);
    tally.embedNanos += System.nanoTime() - started;
    List<MemoryRecord> memories = new ArrayList<>();
    int next = 0;
    for (Planned p : fresh) {
      float[] kept = p.line().memory().embedding();
      memories.add(
          p.line().written(p.id(), p.supersedes(), kept != null ? kept : computed.get(next++)));
    }
    Instant now = clock.instant();
    started = System.nanoTime();
    List<Written> written = store.database().write(h -> {
      List<Written> changes = new ArrayList<>();
      for (int i = 0; i < memories.size(); i++) {
        MemoryRecord m = memories.get(i);
        if (m.state() == MemoryState.DURABLE
            && store
                .durableTwin(
                    h,
                    orgId,
                    new AgentScope(m.agent(), m.endUser()),
                    MemoryDigest.of(m.text()),
                    m.subject(),
                    m.occurredAt())
                .isPresent()) {
          continue;
        }
        store.insert(h, m);
        history.recordUses(
            h,
            m.uses().recent().stream()
                .map(use -> new MemoryHistory.UseRow(m.id(), use.kind(), use.at(), requestId))
                .toList());
        Planned p = fresh.get(i);
        for (Transition before : p.line().history()) {
          history.recordTransition(h, before.of(m.id()));
        }
        history.recordTransition(
            h,
            new Transition(
                m.id(),
                null,
                m.state(),
                "import",
                "imported from line " + p.line().number()
                    + (p.id().equals(p.line().sourceId())
                        ? ""
                        : " (exported as " + p.line().sourceId() + ")"),
                null,
                caller.credentialId(),
                ChangeAuthor.userId(caller),
                requestId,
                now));
        changes.add(new Written(m, changeLog.append(h, m.id(), now)));
      }
      return changes;
    });
    for (Planned p : fresh) {
      if (p.line().memory().embedding() != null) {
        tally.kept++;
      } else {
        tally.computed++;
      }
      if (!p.id().equals(p.line().sourceId())) {
        tally.renamedCount++;
        if (tally.renamed.size() < REPORTED_RENAMES) {
          tally.renamed.put(p.line().sourceId(), p.id());
        }
      }
    }
    tally.writeNanos += System.nanoTime() - started;
    started = System.nanoTime();
    tally.imported += written.size();
    tally.duplicates += fresh.size() - written.size();
    for (Written w : written) {
      if (w.memory().state() == MemoryState.DURABLE) {
        index.added(w.memory());
      }
      index.applied(w.change());
    }
    tally.indexNanos += System.nanoTime() - started;
  }

  /** Makes what the import wrote so far searchable on this node. */
  private void refresh(Tally tally) {
    long started = System.nanoTime();
    index.refresh();
    tally.indexNanos += System.nanoTime() - started;
  }

  /**
   * Each line's final id: its own, unless another organization holds it (then renamed, the same
   * way every time), and the same for the memory it supersedes.
   */
  private List<Planned> plan(String orgId, List<ImportLine> batch) {
    Set<String> ids = new HashSet<>();
    for (ImportLine line : batch) {
      ids.add(line.sourceId());
      if (line.memory().validity().supersedes() != null) {
        ids.add(line.memory().validity().supersedes());
      }
    }
    Map<String, String> owners = store.database().read(h -> store.organizationsOf(h, ids));
    List<Planned> planned = new ArrayList<>();
    for (ImportLine line : batch) {
      String supersedes = line.memory().validity().supersedes();
      planned.add(new Planned(
          line,
          ours(orgId, line.sourceId(), owners),
          supersedes == null ? null : ours(orgId, supersedes, owners)));
    }
    return planned;
  }

  private static String ours(String orgId, String id, Map<String, String> owners) {
    String owner = owners.get(id);
    return owner == null || owner.equals(orgId) ? id : Ids.renamed(id, orgId + ":" + id);
  }

  /** Fails once more than {@code max} bytes were read: a body is spooled, never unbounded. */
  static final class CappedStream extends java.io.FilterInputStream {
    static final class TooLarge extends IOException {
      TooLarge() {
        super("too large", null);
      }
    }

    private final long max;
    private long read;

    CappedStream(InputStream in, long max) {
      super(in);
      this.max = max;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      count(b < 0 ? 0 : 1);
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n = super.read(buffer, offset, length);
      count(Math.max(n, 0));
      return n;
    }

    private void count(int n) throws TooLarge {
      read += n;
      if (read > max) {
        throw new TooLarge();
      }
    }
  }
}
