#!/usr/bin/env python3
"""capture_models.py: runs DNN inferences with PyTorch (random weights, no downloads), fp16,
each inference inside an NVTX range "colosim:infer <model> b<batch>", synchronised inside the
range so that the range's length is the end-to-end latency of that inference. Run it under
colosim-capture to record the kernels; see docs/capture.md.

usage: capture_models.py [--models LIST] [--batches LIST] [--iters N] [--warmup N]
Writes a line per (model, batch) to stdout: the median measured latency in ms (CUDA events)."""
import argparse
import statistics
import sys

import torch


def build(name, batch):
    """(module, example input) for a model name, with random weights."""
    import torchvision.models as tv

    if name == "resnet50":
        return tv.resnet50(weights=None), torch.randn(batch, 3, 224, 224)
    if name == "mobilenet_v3":
        return tv.mobilenet_v3_large(weights=None), torch.randn(batch, 3, 224, 224)
    if name == "efficientnet_b0":
        return tv.efficientnet_b0(weights=None), torch.randn(batch, 3, 224, 224)
    if name == "vit_b16":
        return tv.vit_b_16(weights=None), torch.randn(batch, 3, 224, 224)
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel

    if name == "bert_base":
        m = BertModel(BertConfig())
        return m, torch.randint(0, 30522, (batch, 128))
    if name == "gpt2_decode":
        m = GPT2LMHeadModel(GPT2Config())
        return m, torch.randint(0, 50257, (batch, 1))
    raise SystemExit(f"capture_models.py: unknown model {name}")


class Decode(torch.nn.Module):
    """One GPT-2 decode step: one new token against a 127-token KV cache."""

    def __init__(self, m, batch):
        super().__init__()
        self.m = m
        with torch.no_grad():
            ctx = torch.randint(0, 50257, (batch, 127), device="cuda")
            self.past = m(ctx, use_cache=True).past_key_values

    def forward(self, x):
        return self.m(x, past_key_values=self.past, use_cache=True).logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,mobilenet_v3,efficientnet_b0,vit_b16,bert_base,gpt2_decode")
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    for name in a.models.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            m, x = build(name, batch)
            m = m.eval().half().cuda()
            x = x.half().cuda() if x.dtype.is_floating_point else x.cuda()
            if name == "gpt2_decode":
                m = Decode(m, batch)
            times = []
            with torch.inference_mode():
                for i in range(a.warmup + a.iters):
                    xin = x.cpu() if x.dtype.is_floating_point else x
                    tag = "colosim:infer" if i >= a.warmup else "colosim:warmup"
                    torch.cuda.nvtx.range_push(f"{tag} {name} b{batch}")
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    xd = xin.cuda(non_blocking=False) if x.dtype.is_floating_point else xin
                    y = m(xd)
                    out = y[0] if isinstance(y, (tuple, list)) else y
                    if hasattr(out, "last_hidden_state"):
                        out = out.last_hidden_state
                    out.float().cpu()
                    e.record()
                    torch.cuda.synchronize()
                    torch.cuda.nvtx.range_pop()
                    if i >= a.warmup:
                        times.append(s.elapsed_time(e))
            print(f"{name} b{batch}: median {statistics.median(times):.3f} ms over {len(times)}",
                  flush=True)
            del m
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
