# %% [markdown]
# # What does MobileNetV2 cost, op by op?
#
# A notebook in plain Python: the `# %%` lines separate its cells (Jupyter with jupytext,
# VS Code and PyCharm run them one by one), and it runs as a script too:
#
#     PYTHONPATH=build/python /usr/bin/python3 docs/python_example.py
#
# docs/python.md describes the module.

# %%
import torch
import torchvision

import minfer

torch.manual_seed(0)
module = torchvision.models.mobilenet_v2(weights=None)
x = torch.randn(1, 3, 224, 224)

# Exported to ONNX with BatchNormalization kept, loaded, run 2 + 10 times and profiled.
report = minfer.profile_torch(module, x, runs=10)
totals = report.totals
print(f"{totals['macs']:,} MACs, {totals['params']:,} parameters, "
      f"median {report.json['latency_ms']['median']:.2f} ms on {report.json['threads']} thread(s)")
report  # in a notebook, the last expression of a cell shows the HTML report

# %% [markdown]
# The ten ops that take the most time, with their analytic cost beside the measured time
# (a pandas DataFrame where pandas is installed).

# %%
try:
    frame = report.to_pandas()
    print(frame.sort_values("time_ms.mean", ascending=False)
          [["name", "type", "kind", "macs", "time_ms.mean", "gflops_per_s", "bound"]].head(10).to_string())
except ImportError:
    for op in sorted(report.ops, key=lambda op: -op["time_ms"]["mean"])[:10]:
        print(f"{op['name']:40} {op['type']:20} {op['macs']:>12,} MACs {op['time_ms']['mean']:8.3f} ms")

# %% [markdown]
# ## Folding BatchNormalization
#
# The same export compiled twice, without and with the fold of each BatchNormalization into
# the convolution before it, and run in turns (A B, B A, ...) so that whatever the machine
# does meanwhile falls on both alike: `engine_bench --compare "--fold_bn 0" "--fold_bn 1"`.

# %%
comparison = minfer.compare(minfer.load_torch(module, x, fold_bn=False), minfer.load_torch(module, x), runs=10)
a, b = (side["report"] for side in comparison.json["sides"])
print(f"ops: {len(a['ops'])} -> {len(b['ops'])}, "
      f"median {a['latency_ms']['median']:.2f} ms -> {b['latency_ms']['median']:.2f} ms, "
      f"MACs {a['totals']['macs']:,} -> {b['totals']['macs']:,}")
print(comparison.text()[:3000])

# %% [markdown]
# ## Time against MACs, per op
#
# Ops on one line through the origin would all run at the same GFLOP/s; depthwise
# convolutions sit above the pointwise ones: few MACs, much time (memory-bound).

# %%
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: no plot")
if plt:
    def label(op):  # as the text report writes it: Conv/depthwise
        return op["type"] + ("/" + op["kind"] if op["kind"] else "")

    fig, ax = plt.subplots(figsize=(7, 5))
    for kind in sorted({label(op) for op in report.ops}):
        ops = [op for op in report.ops if label(op) == kind]
        ax.scatter([op["macs"] for op in ops], [op["time_ms"]["mean"] for op in ops], label=kind, s=14)
    ax.set_xscale("symlog", linthresh=1e4)
    ax.set_yscale("log")
    ax.set_xlabel("MACs")
    ax.set_ylabel("mean time (ms)")
    ax.set_title(f"{type(module).__name__}: time against MACs per op")
    ax.legend(fontsize=7)
    if plt.get_backend().lower() == "agg":  # no display (a script under test): nothing to show
        plt.close(fig)
    else:
        plt.show()
