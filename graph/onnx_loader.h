// Loads an ONNX model (.onnx, read with Debian's libonnx protobuf classes) into the
// graph IR that net.json also produces, as written: the engine folds shape subgraphs
// and upgrades older opsets when it compiles. Unnamed nodes get stable names
// ("<op>_<index>"). Errors name the file, the node, its op type and the cause.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/memory_limit.h"
#include "graph/onnx_tensor.h"

namespace minfer {

// The newest ONNX the importer reads: IR version 13, opset 27 of the default domain (ONNX
// 1.22), newer than Debian 12's libonnx (1.12: IR 8, opset 17), whose protobuf schema
// still parses them (the later IR versions add data types, which are refused by name,
// and metadata). Opsets 18 to 27 changed these ops the engine runs, each handled where
// the op is: the reductions' and Pad's axes became inputs (18), Resize gained `axes`,
// `keep_aspect_ratio_policy`, `antialias` (18) and half_pixel_symmetric (19), Pad
// `wrap` (19), Split `num_outputs` (18), ScatterND and ScatterElements max and min (18),
// AveragePool `dilations` (19), Cast `saturate` (19) and `round_mode` (24, both for float8
// only), Range `stash_type` (27, float16 only); GroupNormalization (18; per-channel scale
// from 21), Mish (18), Gelu (20) and Swish (24) are new; every other change up to 27 is
// types (float8, int4, bfloat16...) or wording (docs/model-format.md). A newer model is
// refused naming both versions, as ONNX Runtime does, rather than read by older rules.
inline constexpr int64_t kMaxOnnxIrVersion = 13;
inline constexpr int64_t kMaxOnnxOpset = 27;

// `input_shapes` replaces graph input shapes (required for dynamic dimensions);
// `input_values` fixes inputs at load time (they become initializers, so shape
// computations that read them fold). Throws ModelError,
// UnsupportedModelError (an op, type or attribute the engine lacks) or UsageError (an
// option naming no graph input). The file and the constants it decodes count against
// `max_memory` before they are allocated.
Graph load_onnx(const std::string& path, const std::map<std::string, Shape>& input_shapes = {},
                const std::map<std::string, Tensor>& input_values = {}, int64_t max_memory = default_max_memory());

// The same from the file's bytes in memory: `source` names it in messages; external
// data files are looked up in `base_dir`. The bytes are taken, and freed once parsed, so
// a large model is not held three times (file, protobuf, decoded tensors) while it loads.
Graph parse_onnx(std::string bytes, const std::string& source, const std::string& base_dir,
                 const std::map<std::string, Shape>& input_shapes = {},
                 const std::map<std::string, Tensor>& input_values = {}, int64_t max_memory = default_max_memory());

// A graph input as the file declares it.
struct InputSignature {
  std::string name;
  bool is_tensor = true;                 // false for sequences, maps, optionals
  DataType type = DataType::kUndefined;  // the element type, when declared
  bool has_shape = false;                // the file declares the dimensions:
  std::vector<int64_t> dims;             // each a size, or -1 where it is dynamic (a name or nothing)
};

// The graph inputs a caller feeds, in order (inputs that are also initializers excluded).
std::vector<InputSignature> onnx_inputs(const std::string& path);

}  // namespace minfer
