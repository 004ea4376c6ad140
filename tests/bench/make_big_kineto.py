#!/usr/bin/env python3
"""Writes a large PyTorch profiler (Kineto) trace for measuring `colosim import kineto`: the
events of a real trace (default: HTA's AlexNet trace, shared/data/hta_kineto_traces, MIT) repeated
until the file reaches the size asked for, each copy shifted past the one before in time and in
correlation and External ids, so that it reads as one long profile of many iterations.

    make_big_kineto.py OUT.json [MEGABYTES] [SOURCE.json.gz]      (default 141 MB)

Not committed data: write it to /tmp (tests/bench/bench_kineto_memory.sh does)."""
import gzip
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1]
target = int(float(sys.argv[2] if len(sys.argv) > 2 else 141) * 1e6)
src = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
    here, "..", "..", "..", "shared", "data", "hta_kineto_traces", "alexnet_a100_kineto.json.gz")
with gzip.open(src, "rt") as f:
    doc = json.load(f)
events = doc.pop("traceEvents")
timed = [e for e in events if "ts" in e]
t0 = min(e["ts"] for e in timed)
period = max(e["ts"] + e.get("dur", 0) for e in timed) - t0 + 1000  # us, plus 1 ms between copies
ids = 1 + max([e.get("args", {}).get(k, 0) for e in events for k in ("correlation", "External id")]
              + [e.get("id", 0) for e in events if isinstance(e.get("id"), int)])


def shifted(e, k):
    e = json.loads(json.dumps(e))
    if "ts" in e:
        e["ts"] += k * period
    a = e.get("args")
    if isinstance(a, dict):
        for key in ("correlation", "External id"):
            if isinstance(a.get(key), int) and a[key] > 0:
                a[key] += k * ids
    if isinstance(e.get("id"), int):
        e["id"] += k * ids
    return e


head = json.dumps(doc)[:-1] + ', "traceEvents": [\n'
with open(out, "w") as f:
    f.write(head)
    written, k, first = len(head), 0, True
    while written < target:
        for e in events:
            if k and "ts" not in e:
                continue  # metadata events once
            s = ("" if first else ",\n") + json.dumps(shifted(e, k))
            first = False
            f.write(s)
            written += len(s)
        k += 1
    f.write("\n]}\n")
print("%s: %d copies of %d events, %.1f MB" % (out, k, len(events), os.path.getsize(out) / 1e6))
