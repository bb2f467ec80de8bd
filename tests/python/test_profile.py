"""Model.profile and minfer.compare give engine_bench's documents; the report's renderings."""
import html
import json

import pytest

import minfer
from python_test_util import MACHINE, MODELS, comparison_without_times, engine_bench_json, without_times


def test_profile_is_engine_bench_json():
    path = MODELS / "mobilenet_v2_1_0.json"
    report = minfer.load(path).profile(runs=2, warmup=1, **MACHINE)
    tool = engine_bench_json("--model", path, "--num_runs", 2, "--warmup_runs", 1)
    assert report.totals.keys() == tool["totals"].keys()
    for key in ("macs", "flops", "params", "weight_bytes", "peak_activation_bytes", "naive_activation_bytes",
                "bytes_read", "bytes_written", "arithmetic_intensity", "roofline_ms"):
        assert report.totals[key] == tool["totals"][key], key
    assert report.totals["macs"] == 300_774_272
    for key in ("flops_per_s", "gflops_per_s", "gbytes_per_s", "roofline_fraction"):
        assert report.totals[key] > 0, key
    # Every figure that is not a measured time, at every depth of the document.
    assert without_times(report.json) == without_times(tool)
    assert report.json["runs"] == 2 and len(report.ops[0]["time_ms"]) == 6


def test_image_classification_is_engine_bench_json():
    path, image = MODELS / "digits_cnn.json", MODELS / "samples" / "digit_7.png"
    report = minfer.load(path).profile(runs=1, warmup=0, image=image, top_k=3, **MACHINE)
    tool = engine_bench_json("--model", path, "--num_runs", 1, "--warmup_runs", 0, "--image", image, "--top_k", 3)
    assert without_times(report.json) == without_times(tool)
    assert report.json["classification"]["top"][0]["label"] == "7"
    # Explicit normalisation, as --mean and --std: another input, other scores.
    shifted = minfer.load(path).profile(runs=1, warmup=0, image=image, mean=[0.5], std=0.25, **MACHINE)
    tool = engine_bench_json("--model", path, "--num_runs", 1, "--warmup_runs", 0, "--image", image, "--mean", "0.5",
                             "--std", "0.25")
    assert shifted.json["classification"] == tool["classification"] != report.json["classification"]


def test_renderings_are_engine_bench_formats():
    report = minfer.load(MODELS / "small_cnn.json").profile(runs=3, warmup=0, **MACHINE)
    assert "Run Order" in report.text() and str(report) == report.text()
    assert report.csv().count("\n") >= len(report.ops)
    page = report.html()
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    assert html.escape(page, quote=True) in report._repr_html_()
    assert "arena" in report.memory_plan().lower()
    trace = json.loads(report.trace())
    # One complete event per op per profiled run, named after the op.
    names = [e["name"] for e in trace["traceEvents"] if e.get("ph") == "X" and e["name"] in {o["name"] for o in
                                                                                               report.ops}]
    assert len(names) == 3 * len(report.ops)
    assert "526,336 MACs" in repr(report)


def test_to_pandas_has_one_row_per_op():
    pandas = pytest.importorskip("pandas")
    report = minfer.load(MODELS / "small_cnn.json").profile(runs=2, warmup=0, **MACHINE)
    frame = report.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["name"]) == [op["name"] for op in report.ops]
    assert frame["macs"].sum() == report.totals["macs"] == 526_336
    assert list(frame["time_ms.mean"]) == [op["time_ms"]["mean"] for op in report.ops]


def test_profile_settings_out_of_range_are_refused():
    model = minfer.load(MODELS / "digits_cnn.json")
    image = MODELS / "samples" / "digit_7.png"
    for keywords, message in [({"runs": 0}, "num_runs must be at least 1, got 0"),
                              ({"warmup": -1}, "warmup_runs must not be negative, got -1"),
                              ({"image": image, "top_k": 0}, "top_k must be at least 1, got 0"),
                              ({"image": image, "std": [0]}, "--std '0.0': 0.0 must be positive"),
                              ({"peak_gflops": -1}, "peak_gflops must be positive, got -1"),
                              ({"bandwidth_gbs": 0}, "bandwidth_gbs must be positive, got 0")]:
        with pytest.raises(minfer.ModelError) as error:
            model.profile(**keywords)
        assert str(error.value) == message


def test_compare_is_engine_bench_compare():
    path = MODELS / "mobilenet_v1.json"
    comparison = minfer.compare("--fold_bn 0", "--fold_bn 1", model=path, runs=1, warmup=0, **MACHINE)
    tool = engine_bench_json("--model", path, "--compare", "--fold_bn 0", "--fold_bn 1", "--num_runs", 1,
                             "--warmup_runs", 0)
    assert comparison_without_times(comparison.json) == comparison_without_times(tool)
    # Unfolded, each BatchNormalization runs its Relu6 fused (58 nodes); folded, each Conv does (31).
    assert comparison.json["metrics"][0] == {"a": 58, "b": 31, "key": "nodes", "name": "nodes", "ratio": 31 / 58}
    assert "B/A" in comparison.text() and comparison.html().startswith("<!DOCTYPE html>")
    # Loaded models as sides: the same document but for how each side is named.
    loaded = minfer.compare(minfer.load(path, fold_bn=False), minfer.load(path), runs=1, warmup=0, **MACHINE)
    assert [s["spec"] for s in loaded.json["sides"]] == [f"{path} fold_bn=False", str(path)]
    for side in loaded.json["sides"] + tool["sides"]:
        side["spec"] = ""
    assert comparison_without_times(loaded.json) == comparison_without_times(tool)


def test_compare_refuses_a_bad_side_as_engine_bench_does():
    with pytest.raises(minfer.ModelError) as error:
        minfer.compare(str(MODELS / "small_cnn.json"), "--fold_bn 2", runs=1)
    assert str(error.value).startswith("--compare B '--fold_bn 2': --fold_bn")
