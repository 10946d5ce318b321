"""µs of CPU per chat by where it went, from async-profiler's collapsed stacks (bench/cpu-profile.sh).

A sample belongs to the first group whose marker its stack holds, in the order below, so the
native time under a Java frame (ONNX Runtime under the embedder, SQLite under JDBC) counts where
the Java frame is.
  python3 bench/cpu-per-chat.py cpu.collapsed CHATS
"""
import collections
import sys

GROUPS = [
    ("the JIT", ("CompileBroker", "C2Compiler", "Compile::")),
    ("GC", ("G1", "GCTaskThread", "ConcurrentGCThread")),
    ("the question's embedding", ("BatchEncoder", "OrtSession")),
    ("the candidates' rows", ("MemoryStore.findCandidates", "MemoryStore.findAll")),
    ("Lucene (BM25, vector, neighbours)", ("IndexSearcher",)),
    ("retrieval uses (background)", ("UseRecorder",)),
    ("snapshots and backups", ("Snapshots",)),
    ("conversation history (background)", ("ConversationHistory",)),
    ("the rest of the memory path", ("io/engram/memory",)),
    ("the relay to the upstream", ("OriginClient", "io/engram/platform/httpclient")),
    ("Jetty", ("org/eclipse/jetty",)),
    ("the rest of Engram", ("io/engram",)),
]


def main(path, chats):
    spent = collections.Counter()
    total = 0
    with open(path) as stacks:
        for line in stacks:
            stack, samples = line.rsplit(" ", 1)
            samples = int(samples)
            total += samples
            group = next((name for name, markers in GROUPS if any(m in stack for m in markers)),
                         "elsewhere (JDK, kernel, threads)")
            spent[group] += samples
    # one sample per millisecond of CPU
    print(f"{total * 1000 / chats:8.0f} µs of CPU per chat in all ({chats} chats)")
    for name, samples in spent.most_common():
        print(f"{samples * 1000 / chats:8.0f}  {name}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
