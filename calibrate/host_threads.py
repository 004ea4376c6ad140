#!/usr/bin/env python3
"""host_threads.py: two more host-side measurements with PyTorch on a GPU (docs/model.md, "The
host").

usage: host_threads.py threads [-o FILE.jsonl]
         One process, 1, 2 and 4 Python threads, each serving ResNet-50 batch 1 in eager FP32 on
         its own CUDA stream for 3 s: how much the threads' host time stretches when they share
         one interpreter (the GIL), against one thread alone.
       host_threads.py compile [-o FILE.jsonl]
         ResNet-50 batch 1 FP32 under torch.compile (TorchInductor, no CUDA graphs) against eager:
         latency, CPU time to enqueue one inference, kernels launched."""
import argparse
import json
import statistics
import sys
import threading
import time

import torch
import torchvision.models as tv


def emit(a, rec):
    print(json.dumps(rec), flush=True)
    if a.o:
        with open(a.o, "a") as f:
            f.write(json.dumps(rec) + "\n")


def threads(a):
    models = []
    for _ in range(4):
        m = tv.resnet50(weights=None).eval().cuda()
        x = torch.randn(1, 3, 224, 224, device="cuda")
        s = torch.cuda.Stream()
        with torch.no_grad(), torch.cuda.stream(s):
            for _ in range(20):
                m(x)
        torch.cuda.synchronize()
        models.append((m, x, s))
    for n in (1, 2, 4, 1):
        res = [None] * n
        stop = time.time() + 3.0

        def serve(i):
            m, x, s = models[i]
            enq, lat = [], []
            with torch.no_grad(), torch.cuda.stream(s):
                while time.time() < stop:
                    t0 = time.perf_counter()
                    m(x)
                    t1 = time.perf_counter()
                    s.synchronize()
                    enq.append((t1 - t0) * 1e3)
                    lat.append((time.perf_counter() - t0) * 1e3)
            res[i] = (statistics.median(enq), statistics.median(lat), len(lat))

        ts = [threading.Thread(target=serve, args=(i,)) for i in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        emit(a, {"what": "threads", "threads": n,
                 "enqueue_ms": statistics.mean(r[0] for r in res),
                 "latency_ms": statistics.mean(r[1] for r in res),
                 "inferences_per_s_per_thread": statistics.mean(r[2] for r in res) / 3.0,
                 "per_thread": res})


def timed(m, x, n=100):
    enq, lat = [], []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        m(x)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        enq.append((t1 - t0) * 1e3)
        lat.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(enq), statistics.median(lat)


def kernels(m, x):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        m(x)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA"))


def compiled(a):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    m = tv.resnet50(weights=None).eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    with torch.no_grad():
        for _ in range(10):
            m(x)
        e_enq, e_lat = timed(m, x)
        e_k = kernels(m, x)
        t0 = time.perf_counter()
        c = torch.compile(m)
        for _ in range(3):
            c(x)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        c_enq, c_lat = timed(c, x)
        c_k = kernels(c, x)
    emit(a, {"what": "compile", "model": "resnet50", "batch": 1, "precision": "fp32",
             "eager_enqueue_ms": e_enq, "eager_ms": e_lat, "eager_kernels": e_k,
             "compiled_enqueue_ms": c_enq, "compiled_ms": c_lat, "compiled_kernels": c_k,
             "compile_s": compile_s})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["threads", "compile"])
    ap.add_argument("-o", default="")
    a = ap.parse_args()
    torch.set_num_threads(1)
    threads(a) if a.what == "threads" else compiled(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
