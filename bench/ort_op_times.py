#!/usr/bin/env python3
"""Where each engine spends one model's time, by op type: minfer's profile (engine_bench)
beside ONNX Runtime's own (its session profiler), one thread by default.

    bash bench/ort/setup.sh            # once: onnxruntime-node into bench/ort/node_modules
    /usr/bin/python3 bench/ort_op_times.py MODEL.onnx [--engine_bench build/bench/engine_bench] \
        [--threads 1] [--runs 30]

Prints two tables of per-run time by op type (medians over the timed runs of each node's
time, summed over the type's nodes), minfer's types split by convolution kind
(Conv/pointwise, Conv/depthwise, ...), ONNX Runtime's as its optimised graph has them
(Conv includes its fused activations; a SiLU it did not fuse shows as QuickGelu; Reorder*
are its NCHWc layout changes). The two engines fuse differently, so compare totals and
the big rows, not every line. Profiling adds a little to each engine's time.
"""
import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import compare_common
import compare_ort


def ort_by_type(model, threads, runs, folder):
    _, manifest = compare_ort.write_inputs(compare_ort.input_specs(model), folder)
    prefix = os.path.join(folder, "ort_profile")
    out, _ = compare_common.run_child(["node", compare_ort.RUN_ORT, "--model", model, "--inputs", manifest, "--threads",
                                       str(threads), "--runs", str(runs), "--warmup", "3", "--profile", prefix])
    json.loads(out)  # run_ort.js's report: a failure would have raised
    events = json.load(open(glob.glob(prefix + "*.json")[0]))
    per_node = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[(e["name"], e["args"].get("op_name", "?"))].append(e["dur"] / 1000.0)
    # The warm-up runs are profiled too: each node's median is over all its runs.
    totals = collections.defaultdict(float)
    for (_, op), ms in per_node.items():
        totals[op] += statistics.median(ms)
    return totals


def minfer_by_type(engine_bench, model, threads, runs):
    report, _ = compare_common.engine_bench_report(engine_bench, model, threads, runs, 3)
    totals = collections.defaultdict(float)
    for op in report["ops"]:
        kind = op.get("kind", "")
        totals[op["type"] + ("/" + kind if op["type"] == "Conv" and kind else "")] += op["time_ms"]["median"]
    return totals


def table(title, totals):
    whole = sum(totals.values())
    lines = [f"{title}: {whole:.3f} ms", "| op type | ms | % |", "| --- | ---: | ---: |"]
    for op, ms in sorted(totals.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {op} | {ms:.3f} | {100 * ms / whole:.1f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--engine_bench", default=os.path.join(compare_ort.ROOT, "build", "bench", "engine_bench"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    try:
        with tempfile.TemporaryDirectory() as folder:
            ort = ort_by_type(args.model, args.threads, args.runs, folder)
        ours = minfer_by_type(args.engine_bench, args.model, args.threads, args.runs)
    except (compare_common.ChildError, OSError, ValueError, IndexError) as e:
        sys.exit(f"ort_op_times.py: {args.model}: {compare_ort.first_line(e)}")
    print(table(f"minfer, {args.threads} thread(s)", ours))
    print()
    print(table(f"ONNX Runtime, {args.threads} thread(s)", ort))


if __name__ == "__main__":
    main()
