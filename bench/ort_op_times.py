#!/usr/bin/env python3
"""Where each engine spends one model's time, by op type: minfer's profile (engine_bench)
beside ONNX Runtime's own (its session profiler), one thread by default.

    bash bench/ort/setup.sh            # once: onnxruntime-node into bench/ort/node_modules
    /usr/bin/python3 bench/ort_op_times.py MODEL.onnx [--engine_bench build/bench/engine_bench] \
        [--threads 1] [--runs 30] [--rounds 1] [--convs] [--ort_dir DIR] [--spinning]

Prints two tables of per-run time by op type (medians over the timed runs of each node's
time, summed over the type's nodes), minfer's types split by convolution kind
(Conv/pointwise, Conv/depthwise, ...), ONNX Runtime's as its optimised graph has them
(Conv includes its fused activations; a SiLU it did not fuse shows as QuickGelu; Reorder*
are its NCHWc layout changes). The two engines fuse differently, so compare totals and
the big rows, not every line. Profiling adds a little to each engine's time.

--rounds N runs each engine N times, alternating them (compare_common.alternate), and
takes each node's median over every round's runs (minfer: the median of its per-round
medians): on a shared machine a neighbour then slows both engines' rows alike, where one
run of each can put a busy minute on one side only.

--convs prints instead one row per convolution: minfer's node beside the ORT Conv with
the same output shape and MACs (from its weights' shape), in order among equals, their
median times and ratio. ORT times exclude the activations it did not fuse (a SiLU).
"""
import argparse
import collections
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

import compare_common
import compare_ort


def ort_nodes(model, threads, runs, folder, ort_dir=compare_ort.ORT_DIR, spinning=False):
    """{node: (op type, [input shapes], [output shapes], [times in ms])} from ORT's profiler."""
    _, manifest = compare_ort.write_inputs(compare_ort.input_specs(model), folder)
    prefix = os.path.join(folder, "ort_profile")
    out, _ = compare_common.run_child(["node", os.path.join(ort_dir, "run_ort.js"), "--model", model, "--inputs",
                                       manifest, "--threads", str(threads), "--runs", str(runs), "--warmup", "3",
                                       "--spinning", str(int(spinning)), "--profile", prefix])
    json.loads(out)  # run_ort.js's report: a failure would have raised
    profile = glob.glob(prefix + "*.json")[0]
    events = json.load(open(profile))
    os.remove(profile)  # the next call's is then the only one
    nodes = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            a = e["args"]
            shapes = lambda key: [next(iter(t.values())) for t in a.get(key, [])]
            node = nodes.setdefault(e["name"], (a.get("op_name", "?"), shapes("input_type_shape"),
                                                shapes("output_type_shape"), []))
            node[3].append(e["dur"] / 1000.0)
    return nodes


def merged_ort_nodes(rounds):
    """One ort_nodes result from several: each node's times over all of them."""
    merged = {}
    for nodes in rounds:
        for name, (op, ins, outs, ms) in nodes.items():
            merged.setdefault(name, (op, ins, outs, []))[3].extend(ms)
    return merged


def merged_report(rounds):
    """The first engine_bench report with each op's median time over the reports' medians."""
    report = rounds[0]
    for i, op in enumerate(report["ops"]):
        op["time_ms"]["median"] = statistics.median(r["ops"][i]["time_ms"]["median"] for r in rounds)
    return report


def ort_by_type(nodes):
    # The warm-up runs are profiled too: each node's median is over all its runs.
    totals = collections.defaultdict(float)
    for op, _, _, ms in nodes.values():
        totals[op] += statistics.median(ms)
    return totals


def nchw(shape):
    """[N, C, H, W] of an NCHW or NCHWc ([N, C/c, H, W, c]) shape; both engines use the latter."""
    return list(shape) if len(shape) != 5 else [shape[0], shape[1] * shape[4], *shape[2:4]]


def conv_rows(nodes, report):
    """Each minfer Conv beside the ORT Conv of the same output shape and MACs."""
    ort = collections.defaultdict(list)
    for name, (op, ins, outs, ms) in nodes.items():
        if op not in ("Conv", "FusedConv") or len(ins) < 2 or not outs:
            continue
        out = nchw(outs[0])
        ort[(out[1], tuple(out[2:]), math.prod(out) * math.prod(ins[1][1:]))].append(statistics.median(ms))
    lines = ["| minfer node | kind | output | MACs | minfer ms | ORT ms | minfer / ORT |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for op in report["ops"]:
        if op["type"] != "Conv":
            continue
        shape, ms = nchw(op["output_shape"]), op["time_ms"]["median"]
        match = ort.get((shape[1], tuple(shape[2:]), op["macs"]))
        theirs = match.pop(0) if match else None
        ratio = f"{ms / theirs:.2f}" if theirs else "-"
        lines.append(f"| {op['name']} | {op.get('kind', '')} {op['details'].get('kernel', '')} | {shape} | "
                     f"{op['macs']} | {ms:.3f} | {f'{theirs:.3f}' if theirs else 'unpaired'} | {ratio} |")
    return "\n".join(lines)


def minfer_by_type(report):
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
    parser.add_argument("--rounds", type=int, default=1, help="alternating runs of each engine (see above)")
    parser.add_argument("--convs", action="store_true", help="one row per convolution, paired with ORT's")
    parser.add_argument("--ort_dir", default=compare_ort.ORT_DIR,
                        help="folder holding run_ort.js and its onnxruntime-node (compare_ort.py's --ort_dir)")
    parser.add_argument("--spinning", action="store_true",
                        help="both sides' idle threads spin (compare_ort.py's --spinning); off: both wait passively")
    args = parser.parse_args()
    try:
        with tempfile.TemporaryDirectory() as folder:
            rounds = compare_common.alternate(args.rounds, {
                "ort": lambda: ort_nodes(args.model, args.threads, args.runs, folder, args.ort_dir, args.spinning),
                "minfer": lambda: compare_common.engine_bench_report(args.engine_bench, args.model, args.threads,
                                                                     args.runs, 3, args.spinning)[0]})
        nodes, report = merged_ort_nodes(rounds["ort"]), merged_report(rounds["minfer"])
    except (compare_common.ChildError, OSError, ValueError, IndexError) as e:
        sys.exit(f"ort_op_times.py: {args.model}: {compare_ort.first_line(e)}")
    if args.convs:
        print(conv_rows(nodes, report))
        return
    print(table(f"minfer, {args.threads} thread(s)", minfer_by_type(report)))
    print()
    print(table(f"ONNX Runtime, {args.threads} thread(s)", ort_by_type(nodes)))


if __name__ == "__main__":
    main()
