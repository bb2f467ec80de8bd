"""What the side-by-side comparisons (compare_torch.py, compare_ort.py) share: running
engine_bench and other timed children, alternating the sides round by round, and medians."""
import json
import os
import subprocess
import tempfile


class ChildError(Exception):
    """A child process failed; the message is the first line of its stderr."""


def run_child(cmd, env=None, cpus=None):
    """Runs cmd, on the CPUs `cpus` (taskset's list, e.g. "0") when given; returns (stdout, its
    peak RSS in KiB). The RSS comes from GNU time, not from this process's wait4: Linux
    carries the high-water mark across fork and exec, so a child of this process would
    report at least this process's own (torch's) footprint."""
    pin = ["taskset", "-c", cpus] if cpus else []
    with tempfile.NamedTemporaryFile(mode="r") as rss_file:
        result = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *pin, *cmd], capture_output=True,
                                text=True, env=env)
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            raise ChildError(lines[0] if lines else f"{cmd[0]} exited with status {result.returncode}")
        return result.stdout, int(rss_file.read().split()[-1])


def engine_bench_report(engine_bench, path, threads, runs, warmup, spinning=False, cpus=None):
    """engine_bench's JSON report (every timed run profiled: engine_bench has no unprofiled
    mode) and its peak RSS in KiB, run on `cpus` when given (run_child). OpenMP threads
    wait passively (the machine may be shared), or with `spinning` under libgomp's default
    policy (spin, then sleep): what a user who sets nothing gets."""
    env = dict(os.environ)
    if spinning:
        env.pop("OMP_WAIT_POLICY", None)
    else:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    out, rss = run_child([engine_bench, "--model", path, "--num_threads", str(threads), "--num_runs", str(runs),
                          "--warmup_runs", str(warmup), "--format", "json"], env=env, cpus=cpus)
    return json.loads(out), rss


def alternate(rounds, sides):
    """Calls each side once per round, the order reversed every other round, so that a noisy,
    shared machine slows the sides alike. sides: {name: function returning a figure};
    returns {name: [figure per round]}."""
    figures = {name: [] for name in sides}
    order = list(sides)
    for r in range(rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            figures[name].append(sides[name]())
    return figures

