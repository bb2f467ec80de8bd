#!/usr/bin/env python3
"""Runs PyTorch and minfer on the same models side by side and prints the latency ratios.

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/compare_torch.py \
        [--engine_bench build/bench/engine_bench] [--threads 1,2] [--rounds 5] [--runs 20] \
        [--models mobilenet_v1,mobilenet_v2,resnet18,lstm,decoder] [--json out.json]

Each model is built in PyTorch (random weights, fixed seed, eval mode), exported to ONNX
(opset 13) into a temporary directory, and run by
  - PyTorch "frozen": torch.jit.freeze(torch.jit.trace(model)) then
    torch.jit.optimize_for_inference, on `threads` threads (intra-op and OpenBLAS);
  - minfer: engine_bench --model model.onnx --num_threads threads (BN folded, its default).
Both sides run `runs` timed runs (after warm-up) per round, alternating sides round by
round so that a noisy, shared machine slows both alike; each side's figure is the
median over rounds of each round's median. The ratio engine/torch at or below 1.0 means the engine is as
fast as PyTorch or faster (issue 6's target). With several thread counts the table also
gives each side's speed-up over one thread.

The models mirror the bundled net.json ones: MobileNetV1 1.0 (224), torchvision's
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
import subprocess
import sys
import tempfile
import time
import warnings

import torch
import torchvision

OPSET = 13


def mobilenet_v1(width=1.0, classes=1000):
    """MobileNetV1 (Howard et al. 2017, Table 1): 3x3 conv then 13 depthwise-separable blocks."""
    def c(n):
        return int(n * width)

    def conv_bn(cin, cout, stride):
        return [torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.ReLU6()]

    def separable(cin, cout, stride):
        return [torch.nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), torch.nn.BatchNorm2d(cin),
                torch.nn.ReLU6(), torch.nn.Conv2d(cin, cout, 1, bias=False), torch.nn.BatchNorm2d(cout),
                torch.nn.ReLU6()]

    plan = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)]
    plan += [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
    layers = conv_bn(3, c(32), 2)
    for cin, cout, stride in plan:
        layers += separable(c(cin), c(cout), stride)
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(c(1024), classes),
               torch.nn.Softmax(dim=1)]
    return torch.nn.Sequential(*layers)


class LstmClassifier(torch.nn.Module):
    """models/lstm.json: one LSTM layer over [T, N, D], a linear head on the last hidden state."""

    def __init__(self, input_size=64, hidden_size=256, classes=10):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden_size)
        self.fc = torch.nn.Linear(hidden_size, classes)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.fc(h.reshape(h.shape[1], -1))


class Decoder(torch.nn.Module):
    """models/deconv_decoder.json: latent -> 8x8x256 -> three stride-2 upsamplings -> 64x64x3."""

    def __init__(self, latent=100):
        super().__init__()
        self.project = torch.nn.Linear(latent, 256 * 8 * 8)
        self.up = torch.nn.ModuleList(torch.nn.ConvTranspose2d(cin, cout, 4, stride=2, padding=1)
                                      for cin, cout in ((256, 128), (128, 64), (64, 3)))

    def forward(self, z):
        x = torch.relu(self.project(z).reshape(-1, 256, 8, 8))
        x = torch.relu(self.up[0](x))
        x = torch.relu(self.up[1](x))
        return torch.tanh(self.up[2](x))


def models():
    image = torch.rand(1, 3, 224, 224)
    return {
        "mobilenet_v1": (mobilenet_v1(), image),
        "mobilenet_v2": (torchvision.models.mobilenet_v2(weights=None), image),
        "resnet18": (torchvision.models.resnet18(weights=None), image),
        "lstm": (LstmClassifier(), torch.rand(32, 1, 64)),
        "decoder": (Decoder(), torch.rand(1, 100)),
    }


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


def engine_median_ms(engine_bench, path, threads, runs, warmup):
    """engine_bench's median latency (per-step profiling on, as by default)."""
    result = subprocess.run([engine_bench, "--model", path, "--num_threads", str(threads), "--num_runs", str(runs),
                             "--warmup_runs", str(warmup), "--format", "json"], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"engine_bench failed on {path}: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    return report["latency_ms"]["median"]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine_bench", default=os.path.join(root, "build", "bench", "engine_bench"))
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20, help="timed runs per side and round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--models", default="mobilenet_v1,mobilenet_v2,resnet18,lstm,decoder")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if not os.access(args.engine_bench, os.X_OK):
        sys.exit(f"{args.engine_bench}: not found; build first (bash scripts/build.sh) or pass --engine_bench")
    thread_counts = [int(t) for t in args.threads.split(",")]
    torch.manual_seed(0)
    available = models()
    wanted = args.models.split(",")
    unknown = [m for m in wanted if m not in available]
    if unknown:
        sys.exit(f"--models: unknown model {unknown[0]!r}; choose from {', '.join(available)}")

    warnings.filterwarnings("ignore")  # the exporter's tracing notes are not about the comparison
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in wanted:
            model, x = available[name]
            model.eval()
            path = os.path.join(tmp, name + ".onnx")
            torch.onnx.export(model, (x,), path, opset_version=OPSET, input_names=["input"],
                              output_names=["output"])
            for threads in thread_counts:
                set_torch_threads(threads)
                module = frozen(model, x)
                torch_ms, engine_ms = [], []
                for r in range(args.rounds):
                    sides = [("torch", torch_ms), ("engine", engine_ms)]
                    for side, medians in (sides if r % 2 == 0 else sides[::-1]):
                        if side == "torch":
                            medians.append(torch_median_ms(module, x, args.runs, args.warmup))
                        else:
                            medians.append(engine_median_ms(args.engine_bench, path, threads, args.runs, args.warmup))
                row = {"model": name, "threads": threads, "torch_ms": statistics.median(torch_ms),
                       "engine_ms": statistics.median(engine_ms)}
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
