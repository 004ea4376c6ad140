#!/usr/bin/env python3
"""host_precision.py: measures, with PyTorch on a GPU, what decides a served model's time beside
its kernels (docs/model.md, "Host time and precision"): the CPU time to dispatch one inference in
eager mode, the same inference replayed as a CUDA graph, and the GPU's matrix rates at each
precision. Random weights and inputs, no downloads.

usage: host_precision.py models [--models LIST] [--batches LIST] [--precisions LIST]
                                [--budget-s S] [--trace-dir DIR] [-o FILE.jsonl]
       host_precision.py gemm [-o FILE.jsonl]
Each line of FILE (JSON) is one measurement; a table is printed as it goes. Times are medians.
  eager_ms    wall time of one inference in eager mode, synchronised after it
  enqueue_ms  CPU time of the eager forward call alone (the queue empty before it): host time
  graph_ms    wall time of one replay of the inference captured as a CUDA graph
  gpu_ms      CUDA-event time of one graph replay: the kernels back to back
  kernels     kernels one eager inference launches (PyTorch profiler), launch_us their mean
              CPU time in the CUDA runtime's launch call, ops the top-level aten operators"""
import argparse
import copy
import json
import statistics
import sys
import time
import traceback

import torch

PRECISIONS = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
              "bf16": torch.bfloat16}


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def build(name):
    """(CPU module in fp32, function batch -> CPU input) for a model name, random weights."""
    import torchvision.models as tv

    vision = {"resnet50": tv.resnet50, "resnet101": tv.resnet101, "mobilenet_v2": tv.mobilenet_v2,
              "efficientnet_v2_m": tv.efficientnet_v2_m, "alexnet": tv.alexnet}
    if name in vision:
        return vision[name](weights=None).eval(), lambda b: torch.randn(b, 3, 224, 224)
    if name == "bert_large":
        from transformers import BertConfig, BertModel

        cfg = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                         intermediate_size=4096)
        return BertModel(cfg).eval(), lambda b: torch.randint(0, 30522, (b, 384))
    raise SystemExit(f"host_precision.py: unknown model {name}")


def sync():
    torch.cuda.synchronize()


def timed_eager(m, x, n):
    lat, enq = [], []
    for _ in range(n):
        sync()
        t0 = time.perf_counter()
        m(x)
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        enq.append((t1 - t0) * 1e3)
        lat.append((t2 - t0) * 1e3)
    return statistics.median(lat), statistics.median(enq), min(enq)


def timed_graph(m, x, n):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            m(x)
    torch.cuda.current_stream().wait_stream(s)
    sync()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        m(x)
    g.replay()
    sync()
    wall, gpu = [], []
    for _ in range(n):
        sync()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        a.record()
        g.replay()
        b.record()
        sync()
        wall.append((time.perf_counter() - t0) * 1e3)
        gpu.append(a.elapsed_time(b))
    del g
    return statistics.median(wall), statistics.median(gpu)


def profiled(m, x, trace_path):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        m(x)
        sync()
    kernels, launches, launch_us, ops = 0, 0, 0.0, 0
    for e in prof.events():
        dev = str(getattr(e, "device_type", ""))
        if dev.endswith("CUDA"):
            kernels += 1
            continue
        if e.name in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx",
                      "cudaLaunchKernelExC"):
            launches += 1
            launch_us += e.cpu_time_total
        if e.name.startswith("aten::") and e.cpu_parent is None:
            ops += 1
    if trace_path:
        prof.export_chrome_trace(trace_path)
    return kernels, launches, (launch_us / launches if launches else 0.0), ops


def models(a):
    t_start = time.perf_counter()
    cpu_models = {}
    jobs = []
    precs = a.precisions.split(",")
    main_precs = [p for p in precs if p != "bf16"]
    for p_list in (main_precs, [p for p in precs if p == "bf16"]):
        for name in a.models.split(","):
            for p in p_list:
                for b in [int(v) for v in a.batches.split(",")]:
                    jobs.append((name, p, b))
    print(f"{'model':<18} {'prec':<5} {'batch':>5} {'eager':>8} {'enqueue':>8} {'graph':>8} "
          f"{'gpu':>8} {'kernels':>7} {'launch':>7} {'ops':>5}", flush=True)
    for name, p, b in jobs:
        if time.perf_counter() - t_start > a.budget_s:
            print(f"budget of {a.budget_s} s spent: {name} {p} b{b} and after skipped", flush=True)
            break
        rec = {"what": "model", "model": name, "precision": p, "batch": b}
        try:
            if name not in cpu_models:
                cpu_models[name] = build(name)
            cm, make = cpu_models[name]
            set_tf32(p == "tf32")
            m = copy.deepcopy(cm).to(device="cuda", dtype=PRECISIONS[p])
            x = make(b)
            x = x.to(device="cuda", dtype=PRECISIONS[p]) if x.dtype.is_floating_point else x.cuda()
            with torch.no_grad():
                for _ in range(3):
                    m(x)
                sync()
                t0 = time.perf_counter()
                m(x)
                sync()
                one = time.perf_counter() - t0
                n = max(5, min(30, int(0.6 / max(one, 1e-4))))
                rec["eager_ms"], rec["enqueue_ms"], rec["enqueue_min_ms"] = timed_eager(m, x, n)
                rec["graph_ms"], rec["gpu_ms"] = timed_graph(m, x, n)
                trace = None
                if a.trace_dir and b == 1 and name == "resnet50" and p in ("fp32", "fp16"):
                    trace = f"{a.trace_dir}/{name}_b{b}_{p}_h200_kineto.json"
                rec["kernels"], rec["launches"], rec["launch_us"], rec["ops"] = profiled(m, x, trace)
            rec["iters"] = n
            print(f"{name:<18} {p:<5} {b:>5} {rec['eager_ms']:>8.3f} {rec['enqueue_ms']:>8.3f} "
                  f"{rec['graph_ms']:>8.3f} {rec['gpu_ms']:>8.3f} {rec['kernels']:>7} "
                  f"{rec['launch_us']:>7.2f} {rec['ops']:>5}", flush=True)
        except Exception as e:  # one failed configuration must not lose the others
            rec["error"] = f"{type(e).__name__}: {e}"
            print(f"{name} {p} b{b}: {rec['error']}", flush=True)
            traceback.print_exc()
        emit(a, rec)
        m = x = None
        torch.cuda.empty_cache()


def gemm(a):
    """Dense matrix products (and one convolution, one elementwise add) at each precision."""
    dev = "cuda"
    shapes = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
              (64, 4096, 4096), (512, 4096, 4096)]

    def bench(fn, flop, nbytes=0):
        for _ in range(3):
            fn()
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        one = time.perf_counter() - t0
        reps = max(3, min(200, int(0.15 / max(one, 1e-6))))
        a_, b_ = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(3):
            a_.record()
            for _ in range(reps):
                fn()
            b_.record()
            sync()
            ts.append(a_.elapsed_time(b_) / reps)
        ms = statistics.median(ts)
        return ms, flop / (ms * 1e-3) / 1e12, (nbytes / (ms * 1e-3) / 1e9 if nbytes else 0.0)

    print(f"{'kind':<8} {'prec':<5} {'shape':<18} {'ms':>9} {'TFLOP/s':>8} {'GB/s':>8}", flush=True)
    for p in ("fp32", "tf32", "fp16", "bf16", "int8", "fp8"):
        for (mm, nn, kk) in shapes:
            rec = {"what": "gemm", "precision": p, "m": mm, "n": nn, "k": kk}
            try:
                set_tf32(p == "tf32")
                if p in PRECISIONS:
                    A = torch.randn(mm, kk, device=dev, dtype=PRECISIONS[p])
                    B = torch.randn(kk, nn, device=dev, dtype=PRECISIONS[p])
                    fn = lambda: A @ B  # noqa: E731
                elif p == "int8":
                    A = torch.randint(-64, 64, (mm, kk), device=dev, dtype=torch.int8)
                    B = torch.randint(-64, 64, (kk, nn), device=dev, dtype=torch.int8)
                    fn = lambda: torch._int_mm(A, B)  # noqa: E731
                else:
                    A = torch.randn(mm, kk, device=dev).to(torch.float8_e4m3fn)
                    B = torch.randn(nn, kk, device=dev).to(torch.float8_e4m3fn).t()
                    one = torch.tensor(1.0, device=dev)
                    fn = lambda: torch._scaled_mm(A, B, scale_a=one, scale_b=one,  # noqa: E731
                                                  out_dtype=torch.bfloat16)
                rec["ms"], rec["tflops"], _ = bench(fn, 2.0 * mm * nn * kk)
                print(f"{'gemm':<8} {p:<5} {f'{mm}x{nn}x{kk}':<18} {rec['ms']:>9.4f} "
                      f"{rec['tflops']:>8.1f}", flush=True)
            except Exception as e:
                rec["error"] = f"{type(e).__name__}: {e}"
                print(f"gemm {p} {mm}x{nn}x{kk}: {rec['error']}", flush=True)
            emit(a, rec)
    import torch.nn.functional as F

    for p in ("fp32", "tf32", "fp16", "bf16"):
        rec = {"what": "conv", "precision": p, "shape": "n32 c256 28x28 k256 3x3"}
        try:
            set_tf32(p == "tf32")
            fmt = torch.channels_last if p in ("fp16", "bf16") else torch.contiguous_format
            X = torch.randn(32, 256, 28, 28, device=dev, dtype=PRECISIONS[p]).to(memory_format=fmt)
            W = torch.randn(256, 256, 3, 3, device=dev, dtype=PRECISIONS[p]).to(memory_format=fmt)
            fn = lambda: F.conv2d(X, W, padding=1)  # noqa: E731
            rec["ms"], rec["tflops"], _ = bench(fn, 2.0 * 32 * 256 * 28 * 28 * 256 * 9)
            print(f"{'conv':<8} {p:<5} {'n32c256 28² k256':<18} {rec['ms']:>9.4f} "
                  f"{rec['tflops']:>8.1f}", flush=True)
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"
            print(f"conv {p}: {rec['error']}", flush=True)
        emit(a, rec)
    for p in ("fp32", "fp16"):
        rec = {"what": "add", "precision": p, "elements": 1 << 27}
        try:
            X = torch.randn(1 << 27, device=dev, dtype=PRECISIONS[p])
            Y = torch.randn(1 << 27, device=dev, dtype=PRECISIONS[p])
            size = X.element_size() * (1 << 27)
            rec["ms"], _, rec["gbs"] = bench(lambda: X + Y, 0.0, 3 * size)
            print(f"{'add':<8} {p:<5} {'2^27':<18} {rec['ms']:>9.4f} {'':>8} {rec['gbs']:>8.0f}",
                  flush=True)
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"
            print(f"add {p}: {rec['error']}", flush=True)
        emit(a, rec)


def emit(a, rec):
    rec["device"] = torch.cuda.get_device_name(0)
    rec["torch"] = torch.__version__
    if a.o:
        with open(a.o, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["models", "gemm"])
    ap.add_argument("--models", default="resnet50,mobilenet_v2,resnet101,efficientnet_v2_m,"
                                        "alexnet,bert_large")
    ap.add_argument("--batches", default="1,4,32")
    ap.add_argument("--precisions", default="fp32,tf32,fp16,bf16")
    ap.add_argument("--budget-s", type=float, default=150.0)
    ap.add_argument("--trace-dir", default="")
    ap.add_argument("-o", default="")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    if not torch.cuda.is_available():
        print("host_precision.py: no CUDA device", file=sys.stderr)
        return 77
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_properties(0).multi_processor_count} SMs", flush=True)
    models(a) if a.what == "models" else gemm(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
