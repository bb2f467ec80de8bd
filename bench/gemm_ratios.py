#!/usr/bin/env python3
"""Turns gemm_bench's JSON output (with repetitions) into the markdown table of
docs/performance.md: median GFLOP/s per shape for the engine (plain and with prepacked
weights) and OpenBLAS, and the ratios engine / OpenBLAS.

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
    rates = defaultdict(lambda: defaultdict(list))
    order = []
    for b in report["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        variant, shape, threads = b["run_name"].split("/")[:3]
        key = (shape, threads.split(":")[1])
        if key not in order:
            order.append(key)
        rates[key][variant].append(b["GFLOP/s"])

    ctx = report["context"]
    print(f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs, "
          f"{ctx.get('mhz_per_cpu', '?')} MHz; medians of {max(len(v) for r in rates.values() for v in r.values())} "
          "interleaved repetitions\n")
    print("| shape (M x N x K) | threads | engine GFLOP/s | prepacked GFLOP/s | OpenBLAS GFLOP/s "
          "| engine / OpenBLAS | prepacked / OpenBLAS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    shapes = {}
    for key in order:
        med = {v: statistics.median(r) for v, r in rates[key].items()}
        blas = med.get("openblas")
        ratio = lambda v: f"{med[v] / blas:.2f}" if blas else "n/a"
        print(f"| {key[0]} | {key[1]} | {med['engine']:.1f} | {med['engine_prepacked']:.1f} | "
              f"{blas if blas is None else f'{blas:.1f}'} | {ratio('engine')} | {ratio('engine_prepacked')} |")
        shapes[key] = med
    # Two threads over one, where both were measured.
    speedups = [(s, shapes[(s, "2")], shapes[(s, "1")]) for s, t in order if t == "2" and (s, "1") in shapes]
    if speedups:
        print("\n| shape | engine 2 threads / 1 | OpenBLAS 2 threads / 1 |")
        print("| --- | ---: | ---: |")
        for s, two, one in speedups:
            blas = f"{two['openblas'] / one['openblas']:.2f}" if "openblas" in one else "n/a"
            print(f"| {s} | {two['engine'] / one['engine']:.2f} | {blas} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
