"""minfer from Python: load an ONNX or net.json model, run it, and profile it op by op.

    import minfer
    model = minfer.load("models/mobilenet_v2_1_0.json")
    report = model.profile()             # engine_bench's measurement and report
    print(report.totals["macs"])         # 300774272
    report                               # in a notebook: the HTML report

    report = minfer.profile_torch(torchvision.models.resnet18(), torch.randn(1, 3, 224, 224))

This package only handles arguments and numpy arrays; loading, running, profiling and
every report come from the compiled _minfer, which calls the same library functions as
engine_bench. docs/python.md describes it.
"""
import collections.abc
import functools
import html
import inspect
import json
import os
import tempfile
import threading

import numpy as np

from . import _minfer
from ._minfer import ModelError

__all__ = ["Comparison", "Model", "ModelError", "Report", "compare", "load", "load_torch", "profile_torch"]

# Defaults come from the C++ structs, so they are engine_bench's.
_COMPILE = _minfer.CompileOptions()
_PROFILE = _minfer.ProfileSettings()
_MACHINE = _minfer.MachineOptions()


class _Document:
    """A JSON document of engine_bench's with its renderings (the compiled side renders them)."""

    def __init__(self, native):
        self._native = native

    @functools.cached_property
    def json(self):
        """The document as a dict: what engine_bench --format json prints."""
        return json.loads(self._native.json_text())

    def text(self):
        """engine_bench's text report."""
        return self._native.text()

    def csv(self):
        """engine_bench --format csv."""
        return self._native.csv()

    def html(self):
        """The self-contained HTML page of engine_bench --html."""
        return self._native.html()

    def _repr_html_(self):
        # The page brings its own styles: framed, they cannot restyle the notebook around it.
        page = html.escape(self.html(), quote=True)
        return f'<iframe srcdoc="{page}" style="width:100%;height:800px;border:0"></iframe>'

    def __str__(self):
        return self.text()


class Report(_Document):
    """A profile: the document engine_bench --format json prints, and its renderings."""

    @property
    def ops(self):
        """One dict per executed op, in run order."""
        return self.json["ops"]

    @property
    def totals(self):
        """The whole model's figures: macs, flops, params, bytes, throughput..."""
        return self.json["totals"]

    def memory_plan(self):
        """engine_bench --memory_plan's section."""
        return self._native.memory_plan()

    def trace(self):
        """The Chrome/Perfetto trace of engine_bench --trace (JSON text)."""
        return self._native.trace()

    def to_pandas(self):
        """One row per op (pandas.DataFrame), nested figures as columns such as 'time_ms.mean'."""
        import pandas

        return pandas.json_normalize(self.ops)

    def __repr__(self):
        return f"<minfer.Report of {self.json['model']['name']}: {self.totals['macs']:,} MACs>"


class Comparison(_Document):
    """Two sides run in turns: the document engine_bench --compare --format json prints."""


def _as_array(name, value):
    # The library converts each array to its input's element type (float32, int64, bool).
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise ModelError(f"input '{name}': values of dtype {array.dtype} are not real numbers")
    return array


class Model:
    """A compiled model. Any number of Python threads may run it at once.

    A model whose file declares dynamic dimensions (an ONNX export with dynamic_axes) that
    load() was not given input_shapes for compiles on its first run for the shapes fed,
    and again for each new set of shapes (the last _SHAPE_SETS kept); its `inputs` show
    None for those dimensions."""

    _SHAPE_SETS = 8

    def __init__(self, native, dynamic=None):
        self._native = native  # compiled; for a dynamic model, for the shapes of the last run
        self._dynamic = dynamic  # (declared {name: shape with None}, compile(shapes) -> native) or None
        self._by_shapes = collections.OrderedDict()
        self._lock = threading.Lock()

    @property
    def inputs(self):
        """{name: shape} of the graph inputs, in the model's order (None for a dynamic dimension)."""
        if self._dynamic:
            return dict(self._dynamic[0])
        return {name: tuple(shape) for name, shape in self._native.inputs}

    @property
    def outputs(self):
        """{name: shape} of the graph outputs (of the last run's shapes for a dynamic model)."""
        return {name: tuple(shape) for name, shape in self._compiled().outputs}

    def run(self, feeds):
        """Runs the model once: feeds is {input name: array}, or one array for a model of one
        input. Returns {output name: numpy.ndarray} (float32, or int64 or bool where the
        output is). An array of the input's element type (float32, or int64 for token ids
        and indices), C-contiguous, is read in place; others are converted (but not reals
        to int64). The GIL is released while it runs."""
        if not isinstance(feeds, collections.abc.Mapping):
            if len(self.inputs) != 1:
                raise ModelError(f"{self._spec}: the model has inputs {list(self.inputs)}; give a dict of them")
            feeds = {next(iter(self.inputs)): feeds}
        arrays = {name: _as_array(name, value) for name, value in feeds.items()}
        native = self._for_shapes(arrays) if self._dynamic else self._native
        return native.run(arrays)

    def profile(self, runs=_PROFILE.num_runs, warmup=_PROFILE.warmup_runs, image=None, top_k=_PROFILE.top_k,
                mean=None, std=None, peak_gflops=None, bandwidth_gbs=None, fma_units=_MACHINE.fma_units, probe=False):
        """engine_bench's measurement: `warmup` unprofiled runs, then `runs` profiled ones, on
        engine_bench's reproducible inputs (or `image`, normalised by `mean` and `std`).
        The roofline's peak_gflops and bandwidth_gbs are measured once per thread count
        and cached, as engine_bench does, unless given. Returns a Report. A dynamic model
        is profiled at the shapes of its last run."""
        settings = _minfer.ProfileSettings()
        settings.num_runs = runs
        settings.warmup_runs = warmup
        settings.image = "" if image is None else os.fspath(image)
        settings.top_k = top_k
        settings.mean = _float_list(mean)
        settings.std = _float_list(std)
        settings.machine = _machine_options(peak_gflops, bandwidth_gbs, fma_units, probe)
        return Report(self._compiled().profile(settings))

    @property
    def _spec(self):
        return self._dynamic[2] if self._dynamic else self._native.spec

    def _compiled(self):
        with self._lock:
            native = self._native
        if native is None:
            dynamic = [name for name, shape in self._dynamic[0].items() if None in shape]
            raise ModelError(f"{self._spec}: input '{dynamic[0]}' has dynamic dimensions; run the model once, or load "
                             f"it with input_shapes={{'{dynamic[0]}': (...)}}")
        return native

    def _for_shapes(self, arrays):
        # The declared fixed dimensions must hold: compiling for other ones would change the model.
        declared, compile_for, spec = self._dynamic
        for name, shape in declared.items():
            if name not in arrays:
                raise ModelError(f"{spec}: input '{name}' is not given")
            got = arrays[name].shape
            if shape is not None and (len(got) != len(shape) or any(d not in (None, g) for d, g in zip(shape, got))):
                wanted = "x".join("?" if d is None else str(d) for d in shape)
                raise ModelError(f"{spec}: input '{name}' has shape {'x'.join(map(str, got))}, the model takes "
                                 f"{wanted}")
        key = tuple((name, arrays[name].shape) for name in declared)
        with self._lock:
            native = self._by_shapes.get(key)
            if native is None:
                native = compile_for(dict(key))
                self._by_shapes[key] = native
                if len(self._by_shapes) > self._SHAPE_SETS:
                    self._by_shapes.popitem(last=False)
            self._by_shapes.move_to_end(key)
            self._native = native
        return native

    def __repr__(self):
        if self._dynamic:
            return f"<minfer.Model {self._spec}: inputs {self.inputs}, compiled per input shapes>"
        return f"<minfer.Model {self._spec}: inputs {self.inputs}, outputs {self.outputs}>"


def _float_list(values):
    # engine_bench's --mean/--std text, which the library parses and checks.
    if values is None:
        return ""
    if isinstance(values, str):
        return values
    return ",".join(repr(float(v)) for v in np.atleast_1d(values))


def _machine_options(peak_gflops, bandwidth_gbs, fma_units, probe):
    machine = _minfer.MachineOptions()
    machine.peak_gflops = peak_gflops
    machine.bandwidth_gbs = bandwidth_gbs
    machine.fma_units = fma_units
    machine.reprobe = probe
    machine.cache_file = _minfer.default_machine_cache_file()
    return machine


def _compile_options(num_threads, fold_bn, fuse, clean, blocked_layout, deconv_method, conv_algorithm, lstm_plan,
                     gru_plan, max_memory, check_numerics):
    options = _minfer.CompileOptions()
    options.num_threads = num_threads
    options.fold_bn = fold_bn
    options.fuse = fuse
    options.clean = clean
    options.blocked_layout = blocked_layout
    for name, value in (("deconv_method", deconv_method), ("conv_algorithm", conv_algorithm), ("lstm_plan", lstm_plan),
                        ("gru_plan", gru_plan)):
        if value is not None:
            options.choose(name, value)
    if max_memory is not None:
        options.max_memory = _minfer.parse_byte_size("max_memory", str(max_memory))
    options.check_numerics = check_numerics
    return options


def _shapes(input_shapes):
    return {name: tuple(shape) for name, shape in (input_shapes or {}).items()}


def load(path, *, num_threads=_COMPILE.num_threads, fold_bn=_COMPILE.fold_bn, fuse=_COMPILE.fuse,
         clean=_COMPILE.clean, blocked_layout=_COMPILE.blocked_layout, input_shapes=None, deconv_method=None,
         conv_algorithm=None, lstm_plan=None, gru_plan=None, max_memory=None, check_numerics=_COMPILE.check_numerics):
    """Loads and compiles a model (.onnx: ONNX, .json: net.json) with engine_bench's flags as
    keywords: input_shapes={"input": (1, 3, 224, 224)} is --input_shape, max_memory takes
    bytes or "512M", deconv_method "col2im"|"conv", conv_algorithm "auto"|"direct"|"winograd", lstm_plan
    and gru_plan "auto"|"minimal"|"fused".
    Raises ModelError with engine_bench's message."""
    keywords = dict(num_threads=num_threads, fold_bn=fold_bn, fuse=fuse, clean=clean, blocked_layout=blocked_layout,
                    input_shapes=input_shapes, deconv_method=deconv_method, conv_algorithm=conv_algorithm,
                    lstm_plan=lstm_plan, gru_plan=gru_plan,
                    max_memory=max_memory, check_numerics=check_numerics)
    return _load(os.fspath(path), os.fspath(path), keywords)


def _load(path, shown_as, keywords):
    # How compare() names the model: `shown_as` and the keywords that differ from the defaults.
    spec = " ".join([shown_as] + [f"{k}={v!r}" for k, v in keywords.items() if v != _LOAD_DEFAULTS[k]])
    input_shapes = _shapes(keywords.pop("input_shapes"))
    options = _compile_options(**keywords)
    declared = {name: None if dims is None else tuple(None if d < 0 else d for d in dims)
                for name, dims in _minfer.model_inputs(path)}
    declared.update(input_shapes)
    if all(shape is not None and None not in shape for shape in declared.values()):
        return Model(_minfer.load(path, options, input_shapes, spec))
    # Dynamic dimensions (or none declared): compiled per shapes fed, at run time.
    return Model(None, (declared, lambda shapes: _minfer.load(path, options, shapes, spec), spec))


_LOAD_DEFAULTS = {name: p.default for name, p in inspect.signature(load).parameters.items() if p.kind == p.KEYWORD_ONLY}


def compare(a, b, *, model=None, runs=_PROFILE.num_runs, warmup=_PROFILE.warmup_runs, peak_gflops=None,
            bandwidth_gbs=None, fma_units=_MACHINE.fma_units, probe=False, input_shapes=None, **compile_keywords):
    """engine_bench --compare A B: both sides run in turns (A B, B A, ...) and reported side by
    side with B/A of each figure. A side is a loaded Model, or a string as --compare takes
    it: a model path and/or flags ("--fold_bn 0", "m.onnx --num_threads 2") over the
    run-wide `model`, `input_shapes` and load() keywords. Returns a Comparison."""
    unknown = set(compile_keywords) - set(_LOAD_DEFAULTS)
    if unknown:
        raise TypeError(f"compare() got unexpected keyword arguments {sorted(unknown)}")
    keywords = {k: v for k, v in _LOAD_DEFAULTS.items() if k != "input_shapes"}
    keywords.update(compile_keywords)
    run = _minfer.CompareRun()
    run.num_runs = runs
    run.warmup_runs = warmup
    run.machine = _machine_options(peak_gflops, bandwidth_gbs, fma_units, probe)
    sides = [side._compiled() if isinstance(side, Model) else side for side in (a, b)]
    return Comparison(_minfer.compare(sides[0], sides[1], "" if model is None else os.fspath(model),
                                      _shapes(input_shapes), _compile_options(**keywords), run))


def load_torch(module, example_inputs, **keywords):
    """Exports `module` with torch.onnx.export (in eval mode, with BatchNormalization kept as
    its own node, so that reports show it folded) and loads it with load()'s `keywords`.
    `example_inputs` is a tensor or a tuple of them (the inputs "input", or "input_0",
    "input_1"...). The module's training mode is restored after. Returns a Model."""
    import torch

    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    names = ["input"] if len(example_inputs) == 1 else [f"input_{i}" for i in range(len(example_inputs))]
    unknown = set(keywords) - set(_LOAD_DEFAULTS)
    if unknown:
        raise TypeError(f"load_torch() got unexpected keyword arguments {sorted(unknown)}")
    was_training = module.training
    module.eval()
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, type(module).__name__ + ".onnx")
            # Opset 13, as scripts/export_torch_models.py, whose exports the tests check.
            with torch.no_grad():
                torch.onnx.export(module, example_inputs, path, opset_version=13, input_names=names,
                                  training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
            return _load(path, type(module).__name__, {**_LOAD_DEFAULTS, **keywords})
    finally:
        module.train(was_training)


def profile_torch(module, example_inputs, **keywords):
    """load_torch(module, example_inputs) and Model.profile(); load()'s keywords go to the one,
    the others to the other. Returns a Report."""
    load_keywords = {k: keywords.pop(k) for k in list(keywords) if k in _LOAD_DEFAULTS}
    return load_torch(module, example_inputs, **load_keywords).profile(**keywords)
