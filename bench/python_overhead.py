#!/usr/bin/env python3
"""What profiling from Python costs over engine_bench, on the same model, in alternating rounds.

    OMP_WAIT_POLICY=passive PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py \\
        --model models/mobilenet_v2_1_0.json --rounds 20

Each round runs `engine_bench --model M --format json` (a process, as a user runs it) and
`minfer.load(M).profile()` in this process, in turns (A B, B A, ...), with the same runs,
warmup, threads and given roofs. It prints the medians over the rounds of

  - the model's median latency inside each report (the runs themselves), and
  - the wall time of the whole call: engine_bench's process from start to exit, and
    load() + profile() from Python (without the interpreter's start, paid once per session),

with the ratio Python / engine_bench of each.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import minfer


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="models/mobilenet_v2_1_0.json")
    parser.add_argument("--engine_bench", default="build/bench/engine_bench")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--num_runs", type=int, default=20)
    parser.add_argument("--warmup_runs", type=int, default=2)
    parser.add_argument("--num_threads", type=int, default=1)
    args = parser.parse_args()
    roofs = {"peak_gflops": 100, "bandwidth_gbs": 10}  # given, so that neither side probes

    def tool():
        start = time.perf_counter()
        out = subprocess.run([args.engine_bench, "--model", args.model, "--format", "json", "--num_runs",
                              str(args.num_runs), "--warmup_runs", str(args.warmup_runs), "--num_threads",
                              str(args.num_threads), "--peak_gflops", str(roofs["peak_gflops"]),
                              "--bandwidth_gbs", str(roofs["bandwidth_gbs"])],
                             check=True, capture_output=True, text=True).stdout
        return time.perf_counter() - start, json.loads(out)["latency_ms"]["median"]

    def python():
        start = time.perf_counter()
        report = minfer.load(args.model, num_threads=args.num_threads).profile(
            runs=args.num_runs, warmup=args.warmup_runs, **roofs)
        latency = report.json["latency_ms"]["median"]
        return time.perf_counter() - start, latency

    sides = {"engine_bench": tool, "python": python}
    wall = {name: [] for name in sides}
    latency = {name: [] for name in sides}
    for r in range(args.rounds):
        for name in (list(sides) if r % 2 == 0 else list(reversed(sides))):
            w, lat = sides[name]()
            wall[name].append(w * 1e3)
            latency[name].append(lat)

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"{args.model}, {args.num_threads} thread(s), {args.warmup_runs}+{args.num_runs} runs, "
          f"{args.rounds} rounds interleaved; {cpu}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}")
    print("| figure (median of rounds) | engine_bench | Python | Python / engine_bench |")
    print("| --- | --- | --- | --- |")
    for figure, values in (("model latency (ms)", latency), ("whole call (ms)", wall)):
        a, b = statistics.median(values["engine_bench"]), statistics.median(values["python"])
        print(f"| {figure} | {a:.2f} | {b:.2f} | {b / a:.3f} |")


if __name__ == "__main__":
    main()
