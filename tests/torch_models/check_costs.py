#!/usr/bin/env python3
"""Checks the costs engine_bench reports for the models export_torch_models.py wrote.

    /usr/bin/python3 tests/torch_models/check_costs.py ENGINE_BENCH ENGINE_CHECK MODELS_DIR

Every exported model must run (a model engine_check reports as SKIP, for an op the
engine lacks, fails here), and its MACs must equal the count made in
PyTorch with forward hooks (expected_costs.json). MobileNetV2 and ResNet-18 must also
match their papers (300 M and 1.8 G multiply-adds), and their parameters PyTorch's
parameters plus BatchNormalization's running statistics. (The recurrent models'
parameters are not compared: their exported initial states are constants too, which
the engine may or may not count as weights.) Exit status 0 iff every check passed.
"""
import json
import os
import subprocess
import sys

# The papers' figures, with the ranges the torchvision models fall in.
PAPER_MACS = {"mobilenet_v2": (300e6, 301e6), "resnet18": (1.80e9, 1.83e9)}


def main():
    bench, check, models = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(os.path.join(models, "expected_costs.json")) as f:
        expected = json.load(f)
    # engine_check is the one judge of what the engine supports.
    lines = subprocess.run([check, models], capture_output=True, text=True).stdout.splitlines()
    skipped = {line.split()[1].rstrip(":"): line for line in lines if line.startswith("SKIP ")}
    failures = 0
    for name, want in sorted(expected.items()):
        if name in skipped:
            print(f"FAIL {name}: refused: {skipped[name]}")
            failures += 1
            continue
        # BN folding and fusion off: the graph as exported, whose parameters and MACs PyTorch
        # counts (fusion moves DenseNet's 1x1 transition convolutions after their pools).
        run = subprocess.run([bench, "--model", os.path.join(models, name, "model.onnx"), "--num_runs", "1",
                              "--warmup_runs", "0", "--format", "json", "--fold_bn", "0", "--fuse", "0"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {name}: engine_bench failed: {run.stderr.strip()}")
            failures += 1
            continue
        report = json.loads(run.stdout)
        macs = report["totals"]["macs"]
        params = report["totals"]["params"]
        problems = []
        allowed_macs = {want["macs"], want.get("macs_with_convtranspose_as_conv", want["macs"])}
        if macs not in allowed_macs:
            problems.append(f"{macs:,} MACs, PyTorch's hooks count {want['macs']:,}")
        if name in PAPER_MACS and params != want["params"]:
            problems.append(f"{params:,} parameters, PyTorch has {want['params']:,}")
        if name in PAPER_MACS:
            low, high = PAPER_MACS[name]
            if not low <= macs <= high:
                problems.append(f"{macs:,} MACs is outside the paper's {low:,.0f}..{high:,.0f}")
        if problems:
            print(f"FAIL {name}: " + "; ".join(problems))
            failures += 1
        else:
            print(f"PASS {name}: {macs:,} MACs, {params:,} parameters")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
