#!/usr/bin/env python3
"""Reruns the commands of docs/teaching.md and pastes their output in, or checks them.

Every runnable example in the walkthrough is a ```console block whose first line is
"$ <command>", preceded by a comment that says how to trim the output and which facts
must hold whatever the machine:

    <!-- teaching
    sections: Compare | Nodes that differ (A -> B)   (banner titles to keep; default all)
    head: 12                   (first lines kept of each section, banner included; default all)
    head: Memory plan = 8      (the same for one section only)
    tail: 5                    (last lines kept, with head; per section the same way)
    fact: 924,844,032      (must be in the command's output and in the prose around it)
    expect: conv_1+bn_1    (must be in the command's output)
    expect-re: BatchNormalization\\s+27\\s+0     (a regular expression the output must match)
    range: ^peak activation bytes\\s+([\\d,]+) => 9,633,792..13,000,000
                           (the number each group captures lies in its range; ranges ';'-separated)
    isa-fact: avx2 3,133,504  (in the output of the command run with MINFER_ISA=avx2, and in the
                           prose; skipped, saying so, on a CPU that cannot run that set)
    -->

Whitespace runs count as one space when matching `fact` and `expect`, so column widths
do not matter. Timings are never checked: they change with the machine and the kernels.
Nor are bytes that include the kernels' scratch (arena, peak activation bytes): its size
follows the kernel's register tile, so the instruction set. The doc states those by
relation (`range`, a backreference such as arena = lower bound) or per instruction set
(`isa-fact`).

    scripts/update_teaching.py                 # rerun every command, rewrite the outputs
    scripts/update_teaching.py --check         # rerun, check exit codes and facts; no writes

Commands run from the repository root; a leading build/bench/ names the tools of the
build given by --bin_dir (default: build/bench).
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "teaching.md")

MARKER = re.compile(r"<!-- teaching\n(?P<spec>.*?)-->\n```console\n\$ (?P<command>[^\n]*)\n(?P<output>.*?)```\n",
                    re.S)
MACHINE = re.compile(r"(<!-- teaching-machine -->\n)[^\n]*\n")
BANNER = re.compile(r"^={5,} (.*) ={5,}$")


def number(text):
    return float(text.replace(",", ""))


def show(x):
    return f"{x:,.0f}" if x.is_integer() else f"{x:g}"


def parse_spec(text):
    spec = {"sections": None, "head": {}, "tail": {}, "fact": [], "expect": [], "expect-re": [], "range": [],
            "isa-fact": []}
    for line in text.strip().splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "sections":
            spec["sections"] = [s.strip() for s in value.split("|")]
        elif key in ("head", "tail"):
            title, _, count = value.rpartition("=")
            spec[key][title.strip() or None] = int(count)
        elif key in ("fact", "expect", "expect-re"):
            spec[key].append(value)
        elif key == "range":
            pattern, _, ranges = value.rpartition(" => ")
            bounds = [tuple(number(b) for b in r.strip().split("..")) for r in ranges.split(";")]
            if not pattern or any(len(b) != 2 for b in bounds) or re.compile(pattern).groups != len(bounds):
                raise ValueError(f"range needs 'REGEX => LO..HI; ...', one range per group: {line}")
            spec["range"].append((pattern, bounds))
        elif key == "isa-fact":
            isa, _, fact = value.partition(" ")
            spec["isa-fact"].append((isa, fact.strip()))
        else:
            raise ValueError(f"unknown teaching key '{key}' in: {line}")
    return spec


def split_sections(output):
    """[(title or None, [lines])]: the text before the first banner, then each banner's."""
    sections = [(None, [])]
    for line in output.splitlines():
        m = BANNER.match(line)
        if m:
            sections.append((m.group(1), [line]))
        else:
            sections[-1][1].append(line)
    return sections


def trim(output, spec):
    kept = []
    for title, lines in split_sections(output):
        if spec["sections"] is not None and title not in spec["sections"]:
            continue
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        if not lines:
            continue
        head = spec["head"].get(title, spec["head"].get(None))
        tail = spec["tail"].get(title, spec["tail"].get(None, 0))
        if head is not None and len(lines) > head + tail + 1:
            cut = len(lines) - head - tail
            lines = lines[:head] + [f"[... {cut} more lines]"] + (lines[-tail:] if tail else [])
        kept.append("\n".join(lines))
    return "\n\n".join(kept) + "\n"


def squash(text):
    return re.sub(r"[ \t]+", " ", text)


def run(command, bin_dir, isa=None):
    """Runs the command; with `isa`, under MINFER_ISA=isa (profiler/isa.h)."""
    argv = shlex.split(command)
    if argv[0].startswith("build/bench/"):
        argv[0] = os.path.join(bin_dir, argv[0][len("build/bench/"):])
    env = dict(os.environ, MINFER_ISA=isa) if isa else None
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    return result.returncode, result.stdout, result.stderr


def range_problems(out, spec):
    problems = []
    for pattern, bounds in spec["range"]:
        m = re.search(pattern, out, re.M)
        if not m:
            problems.append(f"/{pattern}/ does not match the output")
            continue
        for group, (low, high) in zip(m.groups(), bounds):
            if not low <= number(group) <= high:
                problems.append(f"/{pattern}/: {group} is outside {show(low)}..{show(high)}")
    return problems


def isa_fact_problems(command, spec, bin_dir, prose):
    """Each instruction set's facts, from the command run under it; notes the sets skipped."""
    problems, notes = [], []
    for isa in dict.fromkeys(isa for isa, _ in spec["isa-fact"]):
        code, out, err = run(command, bin_dir, isa)
        if code != 0 and "cannot run it" in err:
            notes.append(f"  isa-fact {isa}: skipped, {err.strip()}")
            continue
        if code != 0:
            problems.append(f"MINFER_ISA={isa}: exit code {code}: {err.strip()}")
            continue
        for fact_isa, fact in spec["isa-fact"]:
            if fact_isa != isa:
                continue
            if squash(fact) not in squash(out):
                problems.append(f"fact '{fact}' is not in the output with MINFER_ISA={isa}")
            if squash(fact) not in prose:
                problems.append(f"fact '{fact}' ({isa}) is not stated in the text")
    return problems, notes


def kernel_isa(bin_dir):
    """The instruction set the engine's kernels run here (the report's kernel_isa)."""
    code, out, _ = run("build/bench/engine_bench --model models/small_cnn.json --num_runs 1 --warmup_runs 0 "
                       "--format json --peak_gflops 1 --bandwidth_gbs 1", bin_dir)
    return json.loads(out)["kernel_isa"] if code == 0 else "unknown"


def machine_line(isa):
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0]
    return (f"Outputs below: {cpu}, {isa} kernels, {os.cpu_count()} logical CPUs, one thread, load average "
            f"{load:.1f} when generated ({datetime.date.today()}, scripts/update_teaching.py). Times vary from run "
            f"to run and machine to machine.\n")


def prose_of(doc):
    """The doc without its console blocks and comments: what the text itself says."""
    return squash(re.sub(r"<!--.*?-->|```.*?```", "", doc, flags=re.S))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="check only; write nothing")
    parser.add_argument("--bin_dir", default=os.path.join(ROOT, "build", "bench"))
    parser.add_argument("--doc", default=DOC)
    args = parser.parse_args()

    with open(args.doc) as f:
        doc = f.read()
    prose = prose_of(doc)
    failures, failed_blocks = [], 0
    blocks = list(MARKER.finditer(doc))
    if not blocks:
        failures.append("no teaching blocks found")
    pieces, last = [], 0
    for m in blocks:
        command = m.group("command")
        spec = parse_spec(m.group("spec"))
        code, out, err = run(command, args.bin_dir)
        print(f"$ {command}\n  exit {code}", flush=True)
        problems = []
        if code != 0:
            problems.append(f"exit code {code}: {err.strip()}")
        full = squash(out)
        for fact in spec["fact"]:
            if squash(fact) not in full:
                problems.append(f"fact '{fact}' is not in the output")
            if squash(fact) not in prose:
                problems.append(f"fact '{fact}' is not stated in the text")
        for expected in spec["expect"]:
            if squash(expected) not in full:
                problems.append(f"'{expected}' is not in the output")
        for pattern in spec["expect-re"]:
            if not re.search(pattern, out, re.M):
                problems.append(f"/{pattern}/ does not match the output")
        problems += range_problems(out, spec)
        isa_problems, notes = isa_fact_problems(command, spec, args.bin_dir, prose)
        problems += isa_problems
        for note in notes:
            print(note, flush=True)
        failures += [f"{command}: {p}" for p in problems]
        failed_blocks += bool(problems)
        pieces.append(doc[last:m.start("output")])
        pieces.append(trim(out, spec) if code == 0 else m.group("output"))
        last = m.end("output")
    pieces.append(doc[last:])

    for f in failures:
        print("FAILED: " + f, file=sys.stderr)
    if not args.check and not failures:
        line = machine_line(kernel_isa(args.bin_dir))
        updated = MACHINE.sub(lambda m: m.group(1) + line, "".join(pieces))
        with open(args.doc, "w") as f:
            f.write(updated)
        print(f"rewrote {len(blocks)} outputs in {os.path.relpath(args.doc, ROOT)}")
    print(f"{len(blocks) - failed_blocks} passed, {failed_blocks} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
