#!/usr/bin/env python3
"""Times engine_bench builds (or flag sets) against each other, interleaved, as ratios.

    OMP_WAIT_POLICY=PASSIVE bench/compare_binaries.py MODEL[,MODEL...] LABEL=BINARY[ FLAGS] ...

Each round runs every model on every side in turn (engine_bench --format json), so that
machine noise falls on all sides alike; prints per model the median over the rounds of
each side's median latency and the speed-up of each side over the first. engine_bench
--compare does the same for two sides of one binary; this script is for comparing
binaries, e.g. main's build against a branch's (docs/performance.md).
Environment: ROUNDS (default 5), RUNS (profiled runs per engine_bench call, default 20),
STAT (each call's latency statistic: median, the default, or min: on a machine other
jobs load, a call's fastest run is the one least disturbed by them).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3 or any("=" not in s for s in sys.argv[2:]):
        sys.exit(__doc__)
    rounds = int(os.environ.get("ROUNDS", "5"))
    runs = os.environ.get("RUNS", "20")
    stat = os.environ.get("STAT", "median")
    if stat not in ("median", "min"):
        sys.exit("STAT must be median or min")
    models = sys.argv[1].split(",")
    sides = [s.split("=", 1) for s in sys.argv[2:]]
    medians = {(m, label): [] for m in models for label, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        for _ in range(rounds):
            for m in models:
                for label, command in sides:
                    argv = command.split()
                    subprocess.run(argv[:1] + ["--model", m, "--num_runs", runs, "--warmup_runs", "2", "--format",
                                               "json", "--output", out] + argv[1:], check=True,
                                   stdout=subprocess.DEVNULL)
                    with open(out) as f:
                        medians[(m, label)].append(json.load(f)["latency_ms"][stat])
    print("model | " + " | ".join(f"{label} ms (speed-up)" for label, _ in sides))
    for m in models:
        base = statistics.median(medians[(m, sides[0][0])])
        cells = []
        for label, _ in sides:
            v = statistics.median(medians[(m, label)])
            cells.append(f"{v:.2f} ({base / v:.2f}x)")
        print(f"{m} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
