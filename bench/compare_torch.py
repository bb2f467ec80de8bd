#!/usr/bin/env python3
"""Runs PyTorch and minfer on the same models side by side and prints the latency ratios.

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/compare_torch.py \
        [--engine_bench build/bench/engine_bench] [--threads 1,2] [--rounds 5] [--runs 20] \
        [--models mobilenet_v1,mobilenet_v2,resnet18,lstm,decoder] [--json out.json]

Each model is built in PyTorch by bench_models.py (random weights, fixed seed, eval mode),
exported to ONNX (opset 13) into a temporary directory, and run by
  - PyTorch "frozen": torch.jit.freeze(torch.jit.trace(model)) then
    torch.jit.optimize_for_inference, on `threads` threads (intra-op and OpenBLAS);
  - minfer: engine_bench --model model.onnx --num_threads threads (BN folded, its default).
Both sides run `runs` timed runs (after warm-up) per round, alternating sides round by
round so that a noisy, shared machine slows both alike; each side's figure is the
median over rounds of each round's median. The ratio engine/torch at or below 1.0 means the engine is as
fast as PyTorch or faster (issue 6's target). With several thread counts the table also
gives each side's speed-up over one thread.

The default models mirror the bundled net.json ones (--models takes any of
bench_models.py's): MobileNetV1 1.0 (224), torchvision's
MobileNetV2 1.0 and ResNet-18 (224, batch 1), the LSTM of models/lstm.json (D=64, H=256,
32 steps, linear head on the last hidden state) and the decoder of
models/deconv_decoder.json (a linear projection, then three stride-2 4x4
ConvTranspose upsamplings 8x8x256 -> 64x64x3).
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import tempfile
import time

import torch

import bench_models
import compare_common

MODELS = ["mobilenet_v1", "mobilenet_v2", "resnet18", "lstm", "decoder"]


def set_torch_threads(threads):
    """Intra-op threads, and those of the OpenBLAS Debian's torch calls for its GEMMs, which
    torch.set_num_threads does not reach (it would run on every core otherwise)."""
    torch.set_num_threads(threads)
    try:
        ctypes.CDLL("libopenblas.so.0").openblas_set_num_threads(threads)
    except (OSError, AttributeError):
        pass  # torch is not on OpenBLAS here


def frozen(model, x):
    with torch.no_grad():
        return torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x)))


def torch_median_ms(module, x, runs, warmup):
    times = []
    with torch.no_grad():
        for i in range(warmup + runs):
            t0 = time.perf_counter()
            module(x)
            if i >= warmup:
                times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine_bench", default=os.path.join(root, "build", "bench", "engine_bench"))
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20, help="timed runs per side and round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated, from bench_models.py")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if not os.access(args.engine_bench, os.X_OK):
        sys.exit(f"{args.engine_bench}: not found; build first (bash scripts/build.sh) or pass --engine_bench")
    thread_counts = [int(t) for t in args.threads.split(",")]
    wanted = bench_models.parse_names(args.models, MODELS)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in wanted:
            model, x = bench_models.build(name)
            path = os.path.join(tmp, name + ".onnx")
            bench_models.export(model, x, path)
            for threads in thread_counts:
                set_torch_threads(threads)
                module = frozen(model, x)
                figures = compare_common.alternate(args.rounds, {
                    "torch": lambda: torch_median_ms(module, x, args.runs, args.warmup),
                    "engine": lambda: compare_common.engine_bench_report(
                        args.engine_bench, path, threads, args.runs, args.warmup)[0]["latency_ms"]["median"]})
                row = {"model": name, "threads": threads, "torch_ms": statistics.median(figures["torch"]),
                       "engine_ms": statistics.median(figures["engine"])}
                row["ratio"] = row["engine_ms"] / row["torch_ms"]
                results.append(row)
                print(f"{name:14s} {threads} thread(s): torch {row['torch_ms']:9.3f} ms  engine "
                      f"{row['engine_ms']:9.3f} ms  engine/torch {row['ratio']:.3f}", file=sys.stderr)

    print(f"torch {torch.__version__}, {args.rounds} rounds x {args.runs} runs per side, medians (ms)\n")
    print("| model | threads | PyTorch frozen | minfer | minfer / PyTorch | minfer speed-up over 1 thread |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    one_thread = {r["model"]: r["engine_ms"] for r in results if r["threads"] == 1}
    for r in results:
        speedup = one_thread.get(r["model"], float("nan")) / r["engine_ms"] if r["threads"] > 1 else 1.0
        print(f"| {r['model']} | {r['threads']} | {r['torch_ms']:.3f} | {r['engine_ms']:.3f} | {r['ratio']:.3f} | "
              f"{speedup:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
