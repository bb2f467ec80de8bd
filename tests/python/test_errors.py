"""Every model of the bad-input catalogue (tests/data/bad_models/catalogue.json) raises
minfer.ModelError with the very line engine_bench prints after "engine_bench: "."""
import json

import pytest

import minfer
from python_test_util import BAD_MODELS, MACHINE, MACHINE_FLAGS, engine_bench

ENTRIES = [e for e in json.loads((BAD_MODELS / "catalogue.json").read_text()) if "file" in e]


def label(entry):
    return "-".join(str(entry[k]).rsplit("/", 1)[-1] for k in ("file", "image", "max_memory") if k in entry)


@pytest.mark.parametrize("entry", ENTRIES, ids=[label(e) for e in ENTRIES])
def test_bad_model_raises_the_tools_message(entry):
    model_path = BAD_MODELS / entry["file"]
    image = BAD_MODELS / entry["image"] if "image" in entry else None
    keywords = {k: entry[k] for k in ("max_memory", "check_numerics") if k in entry}

    flags = ["--model", model_path, "--num_runs", 1, "--warmup_runs", 0, *MACHINE_FLAGS]
    if image:
        flags += ["--image", image]
    if "max_memory" in entry:
        flags += ["--max_memory", entry["max_memory"]]
    if entry.get("check_numerics"):
        flags += ["--check_numerics"]
    status, out, err = engine_bench(*flags)
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert entry["error"] in err

    with pytest.raises(minfer.ModelError) as error:
        minfer.load(model_path, **keywords).profile(runs=1, warmup=0, image=image, **MACHINE)
    if "dynamic dimension" in entry["error"]:
        # Python compiles such a model for the shapes each run feeds (test_model.py); before
        # a run there are none to profile at, and the message says how to give them.
        assert str(error.value) == (f"{model_path}: input 'x' has dynamic dimensions; run the model once, or load it "
                                    "with input_shapes={'x': (...)}")
        return
    assert f"engine_bench: {error.value}\n" == err
