#!/usr/bin/env python3
"""Runs ONNX Runtime and minfer on the same ONNX models side by side and prints the latency ratios.

    bash bench/ort/setup.sh            # once: onnxruntime-node into bench/ort/node_modules
    /usr/bin/python3 bench/compare_ort.py [--models mobilenet_v2,resnet18,...] [--model_dir DIR] \
        [--threads 1,2] [--rounds 3] [--runs 10] [--warmup 3] [--pin CPU] [--json out.json] [--ort_dir DIR]

Each model (bench_models.py's names; issue 14's set by default) is taken from
--model_dir/<name>.onnx when that file exists, else exported there (or into a temporary
folder) by bench_models.py: opset 13, random weights, a fixed seed. The sides run
  - minfer: engine_bench --model <onnx> --num_threads N (every timed run profiled:
    engine_bench has no unprofiled mode; docs/performance.md puts the cost at <= 2%), on
    its own deterministic inputs of the same shapes;
  - ONNX Runtime: bench/ort/run_ort.js in onnxruntime-node on inputs uniform in [0, 1)
    from numpy's generator seeded with 0, CPU, N intra-op threads, one
    inter-op thread, sequential execution, graph optimisation "all", idle threads not
    spinning, as minfer's OpenMP ones wait passively; with --spinning both sides' idle
    threads spin, each engine's default (libgomp's wait policy unset, ORT's allow_spinning):
    the fair setting on an otherwise idle machine, where two threads gain most from it.
Each side runs `runs` timed runs after `warmup` untimed ones per round, the sides and the
thread counts alternating round by round so that a noisy, shared machine slows them alike
(a second table gives each engine's speedup of more threads over one, from runs made in
the same minutes); each figure is the median over rounds of each round's median, the
peak RSS the largest of the rounds (each child's own, from GNU time; ONNX Runtime's
includes node's, ~51 MiB with onnxruntime-node loaded). Before timing, each model runs once on each side on numpy's
inputs (minfer through its Python module, from --python_dir) and the table gives the
largest absolute difference between their outputs; where they differ by more than 1e-3
of the largest output the row says so instead of quoting a speed. A model minfer refuses is a row "refused: <its error>".
--ort_dir takes run_ort.js and its onnxruntime-node from another folder: with
bench/ort/without_avx512.py's copy and MINFER_ISA=avx2, both engines run their AVX2 kernels.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import numpy as np
import onnx

import bench_models
import compare_common

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_DIR = os.path.join(ROOT, "bench", "ort")


def input_specs(model_path):
    """[(name, dims)] of the model's graph inputs that are not initializers; a dimension
    without a fixed value (a named or missing one) is taken as 1."""
    graph = onnx.load(model_path, load_external_data=False).graph
    constants = {t.name for t in graph.initializer}
    specs = []
    for value in graph.input:
        if value.name in constants:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else 1 for d in value.type.tensor_type.shape.dim]
        specs.append((value.name, dims))
    return specs


def write_inputs(specs, folder, seed=0):
    """Deterministic inputs: {name: array}, also written as raw float32 files with a
    manifest (folder/inputs.json) for run_ort.js; returns (feeds, manifest path)."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    feeds, manifest = {}, []
    for k, (name, dims) in enumerate(specs):
        feeds[name] = rng.random(dims, dtype=np.float32)
        file = f"input_{k}.f32"
        feeds[name].tofile(os.path.join(folder, file))
        manifest.append({"name": name, "dims": dims, "file": file})
    path = os.path.join(folder, "inputs.json")
    with open(path, "w") as f:
        json.dump(manifest, f)
    return feeds, path


def parse_ort_report(text):
    """run_ort.js's JSON line: (median run ms, the report)."""
    report = json.loads(text)
    if not report.get("run_ms"):
        raise ValueError("run_ort.js reported no timed runs")
    return statistics.median(report["run_ms"]), report


def read_ort_outputs(report):
    """{name: array} of the outputs run_ort.js wrote with --outputs."""
    return {o["name"]: np.fromfile(o["file"], dtype=np.float32).reshape(o["dims"]) for o in report["outputs"]}


def max_abs_diff(ours, theirs):
    """(the largest |a - b|, the largest |b|) over every output both sides produced; a missing
    output or a shape mismatch is an error, not a number."""
    if set(ours) != set(theirs):
        raise ValueError(f"outputs differ: minfer {sorted(ours)}, ONNX Runtime {sorted(theirs)}")
    worst = scale = 0.0
    for name, a in ours.items():
        b = theirs[name]
        if tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"output '{name}': minfer shape {list(a.shape)}, ONNX Runtime {list(b.shape)}")
        worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0)))
        scale = max(scale, float(np.max(np.abs(b), initial=0.0)))
    return worst, scale


def disagreement(diff, scale, rtol=1e-3):
    """Why the outputs do not agree, or None when diff <= rtol * scale. Relative to the
    largest output, not absolute: random weights can leave a classifier's logits near 1e-9,
    where any absolute tolerance would pass anything."""
    if diff <= rtol * scale:
        return None
    return f"outputs differ: max abs diff {diff:.3g}, largest |ORT output| {scale:.3g}"


def first_line(error):
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def summarize(name, threads, rounds):
    """One table row from the rounds' figures: rounds is {"minfer": [(ms, rss_kib)], "ort": [...]}."""
    row = {"model": name, "threads": threads}
    for side in ("minfer", "ort"):
        row[side + "_ms"] = statistics.median(ms for ms, _ in rounds[side])
        row[side + "_rss_mib"] = max(rss for _, rss in rounds[side]) / 1024
    row["ratio"] = row["minfer_ms"] / row["ort_ms"]
    return row


def format_table(rows):
    """The Markdown table; rows are summarize()'s with "max_abs_diff" and "max_abs_output", or
    {"model", "threads", "note"} for a model that did not run."""
    lines = ["| model | threads | minfer, ms | ONNX Runtime, ms | minfer / ORT | max abs diff (of max abs output) | "
             "minfer peak RSS, MiB | ORT peak RSS, MiB |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if "note" in r:
            lines.append(f"| {r['model']} | {r['threads']} | {r['note']} | | | | | |")
            continue
        lines.append(f"| {r['model']} | {r['threads']} | {r['minfer_ms']:.3f} | {r['ort_ms']:.3f} | "
                     f"**{r['ratio']:.3f}** | {r['max_abs_diff']:.2g} ({r['max_abs_output']:.2g}) | {r['minfer_rss_mib']:.0f} | "
                     f"{r['ort_rss_mib']:.0f} |")
    return "\n".join(lines)


def speedup_rows(name, model_rows):
    """For each thread count above one: each engine's one-thread median over its median at
    that count. model_rows: {threads: summarize()'s row} of one model."""
    one = model_rows.get(1)
    if not one:
        return []
    return [{"model": name, "threads": t, "minfer": one["minfer_ms"] / r["minfer_ms"], "ort": one["ort_ms"] / r["ort_ms"]}
            for t, r in sorted(model_rows.items()) if t > 1]


def format_speedups(speedups):
    lines = ["| model | threads | minfer speedup | ONNX Runtime speedup |", "| --- | ---: | ---: | ---: |"]
    for s in speedups:
        lines.append(f"| {s['model']} | {s['threads']} | **{s['minfer']:.2f}x** | {s['ort']:.2f}x |")
    return "\n".join(lines)


class Sides:
    """Runs one model on both sides at one thread count."""

    def __init__(self, args, path, manifest, threads):
        self.args, self.path, self.manifest, self.threads = args, path, manifest, threads
        self.cpus = args.pin if threads == 1 else None
        self.kernel_isa = None

    def measure_machine(self):
        """engine_bench once, untimed: its first run on a CPU, ISA and thread count measures the
        machine for the roofline (then cached), and the bandwidth probe's buffers would
        otherwise be that round's peak RSS (686 MiB for MobileNetV1's 50)."""
        compare_common.engine_bench_report(self.args.engine_bench, self.path, self.threads, 1, 0, self.args.spinning,
                                           self.cpus)

    def minfer(self):
        report, rss = compare_common.engine_bench_report(self.args.engine_bench, self.path, self.threads,
                                                         self.args.runs, self.args.warmup, self.args.spinning,
                                                         self.cpus)
        self.kernel_isa = report["kernel_isa"]
        return report["latency_ms"]["median"], rss

    def ort(self, outputs=None):
        cmd = ["node", os.path.join(self.args.ort_dir, "run_ort.js"), "--model", self.path, "--inputs", self.manifest,
               "--threads", str(self.threads), "--runs", str(self.args.runs), "--warmup", str(self.args.warmup),
               "--spinning", str(int(self.args.spinning))]
        try:
            out, rss = compare_common.run_child(cmd + (["--outputs", outputs] if outputs else []), cpus=self.cpus)
        except compare_common.ChildError as e:
            raise OrtError(e) from e
        ms, report = parse_ort_report(out)
        return (ms, rss) if outputs is None else report


class OrtError(Exception):
    """ONNX Runtime failed on a model (a row's note, not a refusal by minfer)."""


class OutputsDiffer(Exception):
    """minfer's and ONNX Runtime's outputs do not agree: no speed is quoted for the model."""


def check_outputs(minfer, path, feeds, threads, sides, folder):
    """(max |minfer - ORT| over the outputs of one run on these inputs, max |ORT output|, ORT's
    version); raises OutputsDiffer when they do not agree."""
    ours = minfer.load(path, num_threads=threads).run(feeds)
    report = sides.ort(outputs=folder)
    diff, scale = max_abs_diff(ours, read_ort_outputs(report))
    why = disagreement(diff, scale)
    if why:
        raise OutputsDiffer(why)
    return diff, scale, report["onnxruntime"].get("node", report["onnxruntime"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine_bench", default=os.path.join(ROOT, "build", "bench", "engine_bench"))
    parser.add_argument("--python_dir", default=os.path.join(ROOT, "build", "python"),
                        help="folder holding the built minfer Python module")
    parser.add_argument("--models", help=f"comma-separated (default: {','.join(bench_models.ISSUE_14)})")
    parser.add_argument("--model_dir", help="take <name>.onnx from here, exporting the missing ones into it")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per side and round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--spinning", action="store_true",
                        help="both sides' idle threads spin (each engine's default); off: both wait passively")
    parser.add_argument("--pin", metavar="CPU",
                        help="run both sides of the one-thread rows on this CPU (taskset -c): where the host's "
                             "vCPUs differ in speed (a busy neighbour on one), either side may otherwise get the "
                             "slower one round by round")
    parser.add_argument("--json", help='also write the rows and speedups here: {"rows": [...], "speedups": [...]}')
    parser.add_argument("--ort_dir", default=ORT_DIR,
                        help="folder holding run_ort.js and node_modules/onnxruntime-node (default: bench/ort)")
    args = parser.parse_args()
    if not os.access(args.engine_bench, os.X_OK):
        sys.exit(f"{args.engine_bench}: not found; build first (bash scripts/build.sh) or pass --engine_bench")
    if not os.path.isdir(os.path.join(args.ort_dir, "node_modules", "onnxruntime-node")):
        sys.exit(f"{args.ort_dir}: onnxruntime-node is not installed there: run bash bench/ort/setup.sh")
    sys.path.insert(0, args.python_dir)
    try:
        import minfer
    except ImportError as e:
        sys.exit(f"{args.python_dir}: cannot import the minfer Python module ({e}); build it or pass --python_dir")
    names = bench_models.parse_names(args.models, bench_models.ISSUE_14)
    thread_counts = [int(t) for t in args.threads.split(",")]

    rows, speedups, isa, ort_version = [], [], None, None
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model_dir or tmp
        os.makedirs(model_dir, exist_ok=True)
        for name in names:
            path = os.path.join(model_dir, name + ".onnx")
            if not os.path.exists(path):
                bench_models.export(*bench_models.build(name), path)
            feeds, manifest = write_inputs(input_specs(path), os.path.join(tmp, name))
            # Every thread count's runs alternate in the same rounds, so that the speedups of
            # more threads over one compare runs made in the same minutes of a shared machine.
            runners, checked, ran = {}, {}, []
            for threads in thread_counts:
                sides = Sides(args, path, manifest, threads)
                try:
                    checked[threads] = check_outputs(minfer, path, feeds, threads, sides,
                                                     os.path.join(tmp, name, "ort_out"))
                    sides.measure_machine()
                except (minfer.ModelError, compare_common.ChildError) as e:
                    checked[threads] = "refused: " + first_line(e)
                except OrtError as e:
                    checked[threads] = "ONNX Runtime failed: " + first_line(e)
                except (OutputsDiffer, ValueError) as e:
                    checked[threads] = first_line(e)
                else:
                    runners[f"minfer@{threads}"], runners[f"ort@{threads}"] = sides.minfer, sides.ort
                    ran.append(sides)
            try:
                rounds = compare_common.alternate(args.rounds, runners)
            except (minfer.ModelError, compare_common.ChildError) as e:
                checked = {t: "refused: " + first_line(e) for t in thread_counts}
            except OrtError as e:
                checked = {t: "ONNX Runtime failed: " + first_line(e) for t in thread_counts}
            isa = isa or next((sides.kernel_isa for sides in ran if sides.kernel_isa), None)
            model_rows = {}
            for threads in thread_counts:
                if isinstance(checked[threads], str):
                    rows.append({"model": name, "threads": threads, "note": checked[threads]})
                    print(f"{name} {threads} thread(s): {checked[threads]}", file=sys.stderr)
                    continue
                diff, scale, ort_version = checked[threads]
                row = summarize(name, threads, {side: rounds[f"{side}@{threads}"] for side in ("minfer", "ort")})
                row["max_abs_diff"], row["max_abs_output"] = diff, scale
                rows.append(row)
                model_rows[threads] = row
                print(f"{name:18s} {threads} thread(s): minfer {row['minfer_ms']:9.3f} ms  ORT {row['ort_ms']:9.3f} ms"
                      f"  minfer/ORT {row['ratio']:.3f}  max abs diff {diff:.2g} of {scale:.2g}", file=sys.stderr)
            speedups.extend(speedup_rows(name, model_rows))

    pinned = f"; one-thread rows on CPU {args.pin}" if args.pin else ""
    pinned += f"; ONNX Runtime from {args.ort_dir}" if os.path.abspath(args.ort_dir) != ORT_DIR else ""
    print(f"onnxruntime-node {ort_version} (spinning {'on' if args.spinning else 'off'}, on both sides), minfer kernel ISA "
          f"{isa}; {args.rounds} rounds x {args.runs} runs per side, medians (ms){pinned}\n")
    print(format_table(rows))
    if speedups:
        print("\nSpeedup of more threads over one (each engine's one-thread median over its own):\n")
        print(format_speedups(speedups))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "speedups": speedups}, f, indent=1)


if __name__ == "__main__":
    main()
