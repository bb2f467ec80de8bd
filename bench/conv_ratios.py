#!/usr/bin/env python3
"""Turns conv_bench's JSON output (conv benchmarks, with repetitions) into the
Markdown tables of docs/performance.md: median GFLOP/s per method and the speed-up
ratios, all from the one run.

    OMP_WAIT_POLICY=passive build/bench/conv_bench --benchmark_filter='^(depthwise|first_layer|small_cin)/' \
        --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true --benchmark_out=conv.json
    /usr/bin/python3 bench/conv_ratios.py conv.json
"""
import json
import re
import sys
from collections import defaultdict


def medians(path):
    """{group: {layer: {method_and_threads: median GFLOP/s}}}"""
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    table = defaultdict(lambda: defaultdict(dict))
    for r in runs:
        if r.get("aggregate_name") != "median" or "GFLOP/s" not in r:
            continue
        parts = r["run_name"].split("/")
        if len(parts) < 4:
            continue
        group, layer, method, threads = parts[:4]
        key = method if threads == "threads:1" else f"{method} x{threads.split(':')[1]}"
        table[group][layer][key] = r["GFLOP/s"]
    return table


def natural(name):
    """Sort key: numbers inside names compare as numbers (dw2 before dw12)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def isa_of(method):
    return method.rsplit("_", 1)[-1]


def fmt(x):
    return "-" if x is None else f"{x:.1f}"


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.1f}x"


def by_isa(methods, isa, two_threads=False):
    for m, v in methods.items():
        if m.startswith(("depthwise_f32", "direct_conv_f32")) and isa_of(m.split(" ")[0]) == isa and (" x" in m) == two_threads:
            return v
    return None


def depthwise_table(layers):
    print("| layer | reference | scalar | avx2 | avx2, 2 threads | avx2 / reference | avx2 / scalar |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for layer, m in sorted(layers.items(), key=lambda item: natural(item[0])):
        ref, sc, av, av2 = m.get("reference"), by_isa(m, "scalar"), by_isa(m, "avx2"), by_isa(m, "avx2", True)
        print(f"| {layer} | {fmt(ref)} | {fmt(sc)} | {fmt(av)} | {fmt(av2)} | {ratio(av, ref)} | {ratio(av, sc)} |")


def regular_table(layers, with_reference):
    head = "| layer |" + (" reference im2col |" if with_reference else "")
    head += " im2col + OpenBLAS | direct scalar | direct avx2 | direct avx2, 2 threads |"
    head += (" avx2 / reference |" if with_reference else "") + " avx2 / OpenBLAS |"
    print(head)
    print("|---|" + "---:|" * (head.count("|") - 2))
    for layer, m in sorted(layers.items(), key=lambda item: natural(item[0])):
        ref, blas = m.get("reference_im2col"), m.get("im2col_openblas")
        sc, av, av2 = by_isa(m, "scalar"), by_isa(m, "avx2"), by_isa(m, "avx2", True)
        row = f"| {layer} |" + (f" {fmt(ref)} |" if with_reference else "")
        row += f" {fmt(blas)} | {fmt(sc)} | {fmt(av)} | {fmt(av2)} |"
        row += (f" {ratio(av, ref)} |" if with_reference else "") + f" {ratio(av, blas)} |"
        print(row)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    t = medians(sys.argv[1])
    if "depthwise" in t:
        print("### Depthwise (median GFLOP/s)\n")
        depthwise_table(t["depthwise"])
        print()
    if "first_layer" in t:
        print("### First layers (median GFLOP/s)\n")
        regular_table(t["first_layer"], True)
        print()
    if "small_cin" in t:
        print("### Input channel sweep (median GFLOP/s)\n")
        regular_table(t["small_cin"], False)
        print()


if __name__ == "__main__":
    main()
