#!/usr/bin/env python3
"""live_torch_tenant.py: a real PyTorch tenant for colosim-live (docs/live.md, "Real programs").

Builds a model as capture_models.py does (random weights, fp16, no downloads), warms it up, prints
"ready", then serves requests: each line on standard input is a request number; the script copies
a fresh input to the GPU, runs one inference, synchronises, and prints the number back.

usage (as a tenant's command in a scenario):
  command = "python3 ../calibrate/live_torch_tenant.py --model resnet50 --batch 8";
The scenario's folder is the working directory; COLOSIM_BATCH is the tenant's traced batch."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture_models import Decode, build  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, default=int(os.environ.get("COLOSIM_BATCH", "1")))
    ap.add_argument("--warmup", type=int, default=20)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    m, x = build(a.model, a.batch)
    m = m.eval().half().cuda()
    floating = x.dtype.is_floating_point
    x = x.half() if floating else x.cuda()
    if a.model == "gpt2_decode":
        m = Decode(m, a.batch)
    host = x.pin_memory() if floating else None

    def infer():
        xd = host.cuda(non_blocking=True) if floating else x
        y = m(xd)
        out = y[0] if isinstance(y, (tuple, list)) else y
        if hasattr(out, "last_hidden_state"):
            out = out.last_hidden_state
        out.float().cpu()  # the result back to the host, as a server would

    with torch.inference_mode():
        for _ in range(a.warmup):
            infer()
        torch.cuda.synchronize()
        print("ready", flush=True)
        for line in sys.stdin:
            infer()
            torch.cuda.synchronize()
            sys.stdout.write(line)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
