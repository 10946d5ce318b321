#!/usr/bin/env python3
"""What a JFR recording of the gateway says, in a few tables (bench/gateway-profile.sh).

    python3 bench/jfr-top.py RECORDING.jfr [requests served while it recorded] [--rows N]

- CPU: method samples by leaf frame, by the nearest of the project's (io.engram) frames, and by
  the project's frames counted once per sample (inclusive): which of our calls the time is under,
  whatever library runs it.
- Allocation: sampled bytes by class and by the nearest io.engram frame (per request when the
  number of requests is given).
- Waits: parks, monitor entries, socket and file reads, by the nearest io.engram frame.
"""
import collections
import json
import subprocess
import sys

EVENTS = "jdk.ExecutionSample,jdk.ObjectAllocationSample,jdk.JavaMonitorEnter,jdk.ThreadPark,jdk.SocketRead,jdk.FileRead"
OURS = "io.engram."


def frames(event):
    """The stack, leaf first, without the lambdas' own frames (their names say nothing)."""
    trace = event["values"].get("stackTrace") or {}
    names = (f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"]
             for f in trace.get("frames") or [])
    return [name for name in names if "$$Lambda" not in name]


def nearest_ours(stack):
    return next((f for f in stack if f.startswith(OURS)), stack[0] if stack else "?")


def duration_ms(value):
    # JFR's JSON gives durations as ISO-8601 ("PT0.00123S").
    return float(value[2:-1]) * 1000 if isinstance(value, str) and value.startswith("PT") else 0.0


def table(title, counter, total, unit, rows, per=None):
    print(f"### {title} (total {total:,.0f} {unit})")
    for name, value in counter.most_common(rows):
        share = 100.0 * value / total if total else 0.0
        extra = f"  {value / per:,.1f} {unit}/request" if per else ""
        print(f"{share:5.1f}%  {value:>12,.0f}  {name}{extra}")
    print()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = 25
    if "--rows" in sys.argv:
        rows = int(sys.argv[sys.argv.index("--rows") + 1])
        args.remove(str(rows))
    path = args[0]
    requests = int(args[1]) if len(args) > 1 and args[1].isdigit() else None
    out = subprocess.run(
        ["jfr", "print", "--json", "--stack-depth", "96", "--events", EVENTS, path],
        check=True, capture_output=True, text=True).stdout
    events = json.loads(out)["recording"]["events"]
    leaf, inclusive, nearest = collections.Counter(), collections.Counter(), collections.Counter()
    alloc_class, alloc_site = collections.Counter(), collections.Counter()
    waits = collections.Counter()
    samples = alloc_total = wait_total = 0
    for event in events:
        kind, stack = event["type"], frames(event)
        if kind == "jdk.ExecutionSample":
            samples += 1
            if stack:
                leaf[stack[0]] += 1
                nearest[nearest_ours(stack)] += 1
            for name in set(f for f in stack if f.startswith(OURS)):
                inclusive[name] += 1
        elif kind == "jdk.ObjectAllocationSample":
            weight = event["values"].get("weight", 0)
            alloc_total += weight
            alloc_class[event["values"]["objectClass"]["name"]] += weight
            alloc_site[nearest_ours(stack)] += weight
        else:
            ms = duration_ms(event["values"].get("duration"))
            wait_total += ms
            waits[kind.removeprefix("jdk.") + " under " + nearest_ours(stack)] += ms
    print(f"{samples:,} method samples" + (f", {requests:,} requests" if requests else ""))
    table("CPU samples by leaf frame", leaf, samples, "samples", rows)
    table("CPU samples by nearest io.engram frame (what the library code under it costs too)",
          nearest, samples, "samples", rows)
    table("CPU samples under each io.engram frame (inclusive)", inclusive, samples, "samples", rows)
    table("allocated bytes by class", alloc_class, alloc_total, "B", rows, requests)
    table("allocated bytes by nearest io.engram frame", alloc_site, alloc_total, "B", rows, requests)
    table("waits (park, monitor, socket, file) by nearest io.engram frame", waits, wait_total, "ms", rows)


if __name__ == "__main__":
    main()
