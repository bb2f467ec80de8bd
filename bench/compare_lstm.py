#!/usr/bin/env python3
"""The LSTM of models/lstm.json in the engine and in PyTorch, side by side.

Runs engine_bench (one or more builds, e.g. before and after a change) with both LSTM
memory plans and the given thread counts, and the same network in PyTorch
(bench_models.py's LstmClassifier: torch.nn.LSTM(64, 256) over 32 steps at batch 1, a
Linear(256, 10) head on the last hidden state; frozen as compare_torch.py does), on one thread.
Every round runs each configuration once, so machine load drifts evenly over all of
them; the table gives the median over rounds of each run's median latency, and the
ratios engine / PyTorch. engine_bench runs with OMP_WAIT_POLICY=passive (the machine is
shared). Unlike compare_torch.py it compares builds and plans, and times the LSTM op. Run it
with Debian's /usr/bin/python3 (python3-torch), from the repository root:

    /usr/bin/python3 bench/compare_lstm.py                      # build/bench/engine_bench
    /usr/bin/python3 bench/compare_lstm.py --engine after=build/bench/engine_bench \\
        --engine before=/tmp/before/engine_bench --rounds 9     # two builds, and their speed-up
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import torch

import bench_models
import compare_torch

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "models", "lstm.json")


def torch_model():
    """bench_models.py's LSTM classifier, frozen as compare_torch.py does, on one thread."""
    torch.manual_seed(0)
    net = bench_models.LstmClassifier().eval()
    x = torch.rand(32, 1, 64)
    compare_torch.set_torch_threads(1)
    frozen = compare_torch.frozen(net, x)
    with torch.no_grad():
        for _ in range(10):
            frozen(x)
    return frozen, x


def time_engine(binary, plan, threads, runs, warmup):
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    cmd = [binary, "--model", MODEL, "--lstm_plan", plan, "--num_threads", str(threads), "--num_runs", str(runs),
           "--warmup_runs", str(warmup), "--format", "json", "--peak_gflops", "100", "--bandwidth_gbs", "10"]
    report = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    lstm = next(op for op in report["ops"] if op["type"] == "LSTM")
    return report["latency_ms"]["median"], lstm["time_ms"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", action="append", metavar="LABEL=PATH",
                    help="an engine_bench build to measure (repeatable; default after=build/bench/engine_bench)")
    ap.add_argument("--plans", default="minimal,fused")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--runs", type=int, default=300, help="runs per engine_bench call and per PyTorch round")
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args()
    engines = [e.split("=", 1) for e in (args.engine or ["after=" + os.path.join(HERE, "..", "build", "bench",
                                                                                 "engine_bench")])]
    configs = [(label, path, plan, int(t)) for label, path in engines for plan in args.plans.split(",")
               for t in args.threads.split(",")]

    frozen, x = torch_model()
    torch_ms, total_ms, lstm_ms = [], {c: [] for c in configs}, {c: [] for c in configs}
    for r in range(args.rounds):
        # Rotate the order, so no configuration always follows the same one.
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for i, c in enumerate(order):
            if i == len(order) // 2:
                torch_ms.append(compare_torch.torch_median_ms(frozen, x, args.runs, warmup=0))
            total, lstm = time_engine(c[1], c[2], c[3], args.runs, args.warmup)
            total_ms[c].append(total)
            lstm_ms[c].append(lstm)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    ref = statistics.median(torch_ms)
    print(f"PyTorch {torch.__version__}, one thread: median {ref:.3f} ms "
          f"(rounds: {', '.join(f'{t:.3f}' for t in torch_ms)})\n")
    print("| build | plan | threads | model ms | LSTM op ms | engine / PyTorch |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for c in configs:
        total = statistics.median(total_ms[c])
        print(f"| {c[0]} | {c[2]} | {c[3]} | {total:.3f} | {statistics.median(lstm_ms[c]):.3f} | {total / ref:.3f} |")
    if len(engines) > 1:
        base = engines[-1][0]
        print(f"\nSpeed-up over `{base}` (ratio of medians):\n")
        print("| build | plan | threads | speed-up |")
        print("| --- | --- | ---: | ---: |")
        for c in configs:
            if c[0] == base:
                continue
            b = (base, dict(engines)[base], c[2], c[3])
            print(f"| {c[0]} | {c[2]} | {c[3]} | {statistics.median(total_ms[b]) / statistics.median(total_ms[c]):.2f} |")


if __name__ == "__main__":
    main()
