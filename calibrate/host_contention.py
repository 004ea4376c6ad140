#!/usr/bin/env python3
"""host_contention.py: two host-side measurements with PyTorch on a GPU (docs/model.md, "Host
time and precision").

usage: host_contention.py cores [-o FILE.jsonl]
         Four processes each serve ResNet-50 batch 1 in eager mode (FP32), one inference after
         another. In each phase some of them run with their dispatching thread pinned to a set of
         CPU cores; the others sleep. Reports each phase's median CPU time to enqueue one
         inference (host time) and its latency: more dispatching processes than cores should
         stretch host time in proportion.
       host_contention.py cap [--label L] [-o FILE.jsonl]
         One process: ResNet-50 batch 1 eager FP32 (host-bound) and batch 32 FP16 as a CUDA graph
         (GPU-bound). Run it as an MPS client with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set to see
         which of the two an SM cap slows."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PHASES = [(1, [0]), (2, [0]), (4, [0]), (2, [0, 1]), (4, [0, 1]), (4, [0, 1, 2, 3]), (1, [0])]
PHASE_S, GAP_S = 3.0, 0.6


def resnet(batch, dtype):
    import torch
    import torchvision.models as tv

    m = tv.resnet50(weights=None).eval().to(device="cuda", dtype=dtype)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)
    return m, x


def worker(i, d):
    import torch

    torch.set_num_threads(1)
    m, x = resnet(1, torch.float32)
    allcores = os.sched_getaffinity(0)
    with torch.no_grad():
        for _ in range(30):
            m(x)
        torch.cuda.synchronize()
        open(f"{d}/ready.{i}", "w").close()
        while not os.path.exists(f"{d}/go"):
            time.sleep(0.01)
        time.sleep(0.05)
        t0 = float(open(f"{d}/go").read())
        out = []
        for k, (n, cores) in enumerate(PHASES):
            start = t0 + k * (PHASE_S + GAP_S)
            time.sleep(max(0.0, start - time.time()))
            if i >= n:
                continue
            os.sched_setaffinity(0, cores)
            enq, lat = [], []
            while time.time() < start + PHASE_S:
                s = time.perf_counter()
                m(x)
                e = time.perf_counter()
                torch.cuda.synchronize()
                enq.append((e - s) * 1e3)
                lat.append((time.perf_counter() - s) * 1e3)
            os.sched_setaffinity(0, allcores)
            out.append({"phase": k, "processes": n, "cores": len(cores), "worker": i,
                        "inferences": len(lat), "enqueue_ms": statistics.median(enq),
                        "latency_ms": statistics.median(lat)})
    with open(f"{d}/result.{i}", "w") as f:
        json.dump(out, f)


def cores(a):
    import tempfile

    d = tempfile.mkdtemp()
    procs = [subprocess.Popen([sys.executable, __file__, "worker", "--index", str(i), "--dir", d])
             for i in range(4)]
    deadline = time.time() + 120
    while time.time() < deadline and not all(os.path.exists(f"{d}/ready.{i}") for i in range(4)):
        if any(p.poll() not in (None, 0) for p in procs):
            break
        time.sleep(0.1)
    if not all(os.path.exists(f"{d}/ready.{i}") for i in range(4)):
        for p in procs:
            p.kill()
        print("host_contention.py: workers did not start", file=sys.stderr)
        return 1
    with open(f"{d}/go.tmp", "w") as f:
        f.write(repr(time.time() + 0.5))
    os.rename(f"{d}/go.tmp", f"{d}/go")
    for p in procs:
        p.wait(timeout=120)
    rows = []
    for i in range(4):
        try:
            rows += json.load(open(f"{d}/result.{i}"))
        except OSError:
            print(f"worker {i} wrote no result", file=sys.stderr)
    print(f"{'phase':>5} {'procs':>5} {'cores':>5} {'enqueue ms':>10} {'latency ms':>10} "
          f"{'inf/s per proc':>14}")
    for k, (n, cs) in enumerate(PHASES):
        r = [x for x in rows if x["phase"] == k]
        if not r:
            continue
        enq = statistics.mean(x["enqueue_ms"] for x in r)
        lat = statistics.mean(x["latency_ms"] for x in r)
        rate = statistics.mean(x["inferences"] for x in r) / PHASE_S
        print(f"{k:>5} {n:>5} {len(cs):>5} {enq:>10.3f} {lat:>10.3f} {rate:>14.1f}")
        if a.o:
            with open(a.o, "a") as f:
                f.write(json.dumps({"what": "cores", "phase": k, "processes": n,
                                    "cores": len(cs), "enqueue_ms": enq, "latency_ms": lat,
                                    "inferences_per_s": rate, "workers": r}) + "\n")
    return 0


def cap(a):
    import torch

    torch.set_num_threads(1)
    rec = {"what": "cap", "label": a.label,
           "mps_active_thread_percentage": os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
           "sms_seen": torch.cuda.get_device_properties(0).multi_processor_count}
    with torch.no_grad():
        m, x = resnet(1, torch.float32)
        for _ in range(30):
            m(x)
        torch.cuda.synchronize()
        lat, enq = [], []
        for _ in range(100):
            torch.cuda.synchronize()
            s = time.perf_counter()
            m(x)
            e = time.perf_counter()
            torch.cuda.synchronize()
            enq.append((e - s) * 1e3)
            lat.append((time.perf_counter() - s) * 1e3)
        rec["hostbound_b1_eager_ms"] = statistics.median(lat)
        rec["hostbound_b1_enqueue_ms"] = statistics.median(enq)
        for name, (b, dt) in {"b1_fp32": (1, torch.float32), "b32_fp16": (32, torch.float16)}.items():
            m, x = resnet(b, dt)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    m(x)
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                m(x)
            ts = []
            for _ in range(30):
                ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                ev0.record()
                g.replay()
                ev1.record()
                torch.cuda.synchronize()
                ts.append(ev0.elapsed_time(ev1))
            rec[f"graph_{name}_gpu_ms"] = statistics.median(ts)
    print(json.dumps(rec), flush=True)
    if a.o:
        with open(a.o, "a") as f:
            f.write(json.dumps(rec) + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["cores", "cap", "worker"])
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("--dir", default="")
    ap.add_argument("--label", default="")
    ap.add_argument("-o", default="")
    a = ap.parse_args()
    if a.what == "worker":
        worker(a.index, a.dir)
        return 0
    return cores(a) if a.what == "cores" else cap(a)


if __name__ == "__main__":
    sys.exit(main())
