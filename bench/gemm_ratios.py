#!/usr/bin/env python3
"""Turns gemm_bench's JSON output (with repetitions) into the markdown tables of
docs/performance.md: median GFLOP/s per shape for the engine (plain and with prepacked
weights) and OpenBLAS, the ratios engine / OpenBLAS, and the two-thread speed-ups
(wall time for both thread counts).

    build/bench/gemm_bench --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \\
        --benchmark_out=gemm.json --benchmark_out_format=json
    bench/gemm_ratios.py gemm.json
"""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    with open(path) as f:
        report = json.load(f)
    # rates[(shape, threads)][variant] = list of GFLOP/s, one per repetition
    # rates: the benchmark's GFLOP/s counter (CPU time at 1 thread, wall time at 2);
    # wall: GFLOP/s by wall time, for the speed-ups.
    rates = defaultdict(lambda: defaultdict(list))
    wall = defaultdict(lambda: defaultdict(list))
    dims = {}
    first_family = {}  # registration order, whatever order the interleaved runs took
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in report["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        variant, shape, mnk, threads = b["run_name"].split("/")[:4]
        key = (shape, threads.split(":")[1])
        dims[shape] = mnk
        first_family[key] = min(first_family.get(key, b["family_index"]), b["family_index"])
        rates[key][variant].append(b["GFLOP/s"])
        m, n, k = (int(x) for x in mnk.split("x"))
        wall[key][variant].append(2e-9 * m * n * k / (b["real_time"] * scale[b["time_unit"]]))
    order = sorted(rates, key=lambda key: first_family[key])

    ctx = report["context"]
    print(f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs, "
          f"{ctx.get('mhz_per_cpu', '?')} MHz; medians of {max(len(v) for r in rates.values() for v in r.values())} "
          "interleaved repetitions\n")
    print("| shape, M x N x K | threads | engine GFLOP/s | prepacked GFLOP/s | OpenBLAS GFLOP/s "
          "| engine / OpenBLAS | prepacked / OpenBLAS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key in order:
        med = {v: statistics.median(r) for v, r in rates[key].items()}
        blas = med.get("openblas")
        ratio = lambda v: f"{med[v] / blas:.2f}" if blas else "n/a"
        print(f"| {key[0]} {dims[key[0]]} | {key[1]} | {med['engine']:.1f} | {med['engine_prepacked']:.1f} | "
              f"{blas if blas is None else f'{blas:.1f}'} | {ratio('engine')} | {ratio('engine_prepacked')} |")
    # Two threads over one, where both were measured, by wall time.
    wall_med = {key: {v: statistics.median(r) for v, r in w.items()} for key, w in wall.items()}
    pairs = [(s, wall_med[(s, "2")], wall_med[(s, "1")]) for s, t in order if t == "2" and (s, "1") in wall_med]
    if pairs:
        print("\n| shape | engine 2 threads / 1 | prepacked 2 threads / 1 | OpenBLAS 2 threads / 1 |")
        print("| --- | ---: | ---: | ---: |")
        for s, two, one in pairs:
            blas = f"{two['openblas'] / one['openblas']:.2f}" if "openblas" in one else "n/a"
            print(f"| {s} | {two['engine'] / one['engine']:.2f} | "
                  f"{two['engine_prepacked'] / one['engine_prepacked']:.2f} | {blas} |")

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
