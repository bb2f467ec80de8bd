"""Two engine_bench binaries side by side, op by op: each op's fastest run over interleaved
rounds (`engine_bench --format json`, ops[].time_ms.min), summed per model. On a shared,
noisy host a sum of per-op minima moves far less than a whole run's latency, so this is
how docs/performance.md measures a change before and after (both binaries in one run).

    /usr/bin/python3 bench/op_minima.py BEFORE AFTER MODEL [MODEL ...] \\
        [--rounds 3] [--runs 15] [--threads 1] [--ops 0.1]

BEFORE and AFTER are engine_bench binaries (copy the old one aside before rebuilding).
Prints a markdown table: per model the two sums and after's speed-up; with --ops R also
every op whose minima differ by more than the fraction R, to see where a change acted.
"""
import argparse
import json
import os
import subprocess
import sys


def op_minima(report):
    """{op name: its fastest profiled run, ms} of one engine_bench JSON report."""
    return {op["name"]: op["time_ms"]["min"] for op in report["ops"]}


def fold(best, observed):
    """best with each op's time lowered to observed's where that is faster."""
    for name, ms in observed.items():
        best[name] = min(best.get(name, float("inf")), ms)
    return best


def run_once(binary, model, threads, runs):
    command = [binary, "--model", model, "--num_threads", str(threads), "--num_runs", str(runs), "--warmup_runs", "2",
               "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return op_minima(json.loads(done.stdout))


def measure(binaries, model, rounds, runs, threads):
    """[per binary {op: fastest ms}] over `rounds` rounds, the binaries alternating."""
    best = [{} for _ in binaries]
    for _ in range(rounds):
        for i, binary in enumerate(binaries):
            fold(best[i], run_once(binary, model, threads, runs))
    return best


def model_row(model, before, after):
    b, a = sum(before.values()), sum(after.values())
    return f"| {os.path.splitext(os.path.basename(model))[0]} | {b:.2f} | {a:.2f} | {b / a:.2f}x |"


def changed_ops(before, after, fraction):
    """(name, before ms, after ms, after / before) of the ops both ran whose minima differ
    by more than `fraction` of before's, in the model's order."""
    rows = []
    for name, b in before.items():
        a = after.get(name)
        if a is not None and b > 0 and abs(a / b - 1) > fraction:
            rows.append((name, b, a, a / b))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ops", type=float, default=None, metavar="FRACTION")
    args = parser.parse_args()
    for binary in (args.before, args.after):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary}: not an executable engine_bench")
    print(f"Sum of per-op minima, {args.rounds} interleaved rounds x {args.runs} runs, {args.threads} thread(s)\n")
    print("| model | before, ms | after, ms | speed-up |")
    print("| --- | ---: | ---: | ---: |")
    details = []
    for model in args.models:
        before, after = measure([args.before, args.after], model, args.rounds, args.runs, args.threads)
        print(model_row(model, before, after), flush=True)
        if args.ops is not None:
            details += [(model, *row) for row in changed_ops(before, after, args.ops)]
    if details:
        print(f"\nOps whose minima moved by more than {args.ops:.0%} (ms):\n")
        print("| model | op | before | after | after / before |")
        print("| --- | --- | ---: | ---: | ---: |")
        for model, name, b, a, ratio in details:
            print(f"| {os.path.basename(model)} | {name} | {b:.3f} | {a:.3f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
