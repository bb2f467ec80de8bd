#!/usr/bin/env python3
"""Times two Google Benchmark binaries (conv_bench, gemm_bench, op_bench builds) against
each other, interleaved, as ratios: e.g. main's conv_bench copied aside against a branch's.

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/compare_gbench.py BEFORE AFTER FILTER [ROUNDS]

Each round runs the cases FILTER selects (a --benchmark_filter regex) once in each binary
in turn, so that machine noise falls on both alike; prints per case the median over the
rounds of each binary's real time and after / before, then their geometric mean. Cases
are matched by name: a case only one binary has is left out.
"""
import json
import math
import statistics
import subprocess
import sys
from collections import defaultdict


def run(binary, pattern):
    out = subprocess.run([binary, f"--benchmark_filter={pattern}", "--benchmark_format=json",
                          "--benchmark_min_time=0.1"], capture_output=True, text=True, check=True).stdout
    return {b["name"]: b["real_time"] for b in json.loads(out)["benchmarks"]}


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    before, after, pattern = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) == 5 else 3
    times = {before: defaultdict(list), after: defaultdict(list)}
    for _ in range(rounds):
        for binary in (before, after):
            for name, t in run(binary, pattern).items():
                times[binary][name].append(t)
    ratios = []
    print("| case | before | after | after / before |\n| --- | ---: | ---: | ---: |")
    for name, samples in times[before].items():
        if name not in times[after]:
            continue
        b, a = statistics.median(samples), statistics.median(times[after][name])
        ratios.append(a / b)
        print(f"| {name} | {b:.1f} | {a:.1f} | {a / b:.3f} |")
    if ratios:
        print(f"\ngeometric mean of after / before: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")


if __name__ == "__main__":
    main()
