#include "graph/netjson_loader.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

#include "graph/errors.h"
#include "graph/input_file.h"
#include "graph/memory_limit.h"

namespace minfer {

using nlohmann::json;

namespace {

// A JSON document in memory can take this many bytes per byte of text (an array of
// empty objects: a 16-byte value plus a heap-allocated map per 3 bytes, and the array's
// spare capacity), so the text is refused when that much would pass the memory limit.
constexpr int64_t kJsonBytesPerTextByte = 32;

// The deepest nesting a document may have. net.json's own structure is five levels deep
// (the top level, nodes, a node, its attrs, a list); the JSON library's value functions
// (dump, comparison) recurse once per level, so a document nested a million levels deep
// would overflow the stack.
constexpr size_t kMaxJsonDepth = 64;

// Appends v's JSON text to out until out is longer than kExcerptChars: a message never
// copies, or recurses through, more of a value than it quotes.
void append_json(const json& v, std::string& out) {
  if (out.size() > kExcerptChars) return;
  if (v.is_string()) {
    out += json(excerpt(v.get_ref<const std::string&>())).dump(-1, ' ', false, json::error_handler_t::replace);
  } else if (v.is_array() || v.is_object()) {
    out += v.is_array() ? '[' : '{';
    for (auto it = v.begin(); it != v.end() && out.size() <= kExcerptChars; ++it) {
      if (it != v.begin()) out += ',';
      if (v.is_object()) {
        append_json(it.key(), out);
        out += ':';
      }
      append_json(it.value(), out);
    }
    out += v.is_array() ? ']' : '}';
  } else {
    out += v.dump();
  }
}

// A value as a message quotes it: the excerpt of its JSON text.
std::string json_excerpt(const json& v) {
  std::string out;
  append_json(v, out);
  return excerpt(out);
}

class Parser {
 public:
  Parser(std::string source, std::filesystem::path base_dir, int64_t max_memory)
      : path_(std::move(source)), base_dir_(std::move(base_dir)), budget_(max_memory) {}

  Graph parse(std::string_view text) {
    json doc = parse_json(text);
    if (!doc.is_object()) fail("the top level must be a JSON object");
    check_keys(doc, "the top level",
               {"format", "version", "name", "doc", "inputs", "outputs", "weights_file", "initializers", "nodes",
                "preprocess", "labels"});
    if (doc.contains("format") && doc["format"] != "net.json") fail("'format' must be \"net.json\"");
    if (doc.contains("version") && doc["version"] != 1)
      fail(fmt::format("unsupported 'version' {}", json_excerpt(doc["version"])));

    Graph g;
    g.source = path_;
    g.name = doc.contains("name") ? get_string(doc["name"], "name") : std::filesystem::path(path_).stem().string();
    parse_inputs(require(doc, "inputs", "the top level"), g);
    for (const json& o : require_array(doc, "outputs", "the top level"))
      g.outputs.push_back(get_string(o, "outputs[]"));
    if (doc.contains("weights_file")) {
      weights_path_ = get_string(doc["weights_file"], "weights_file");
      open_weights_file();
      g.data_files.push_back((base_dir_ / weights_path_).string());
    }
    if (doc.contains("initializers")) parse_initializers(doc["initializers"], g);
    for (const json& n : require_array(doc, "nodes", "the top level")) g.nodes.push_back(parse_node(n));
    if (doc.contains("preprocess")) g.preprocess = parse_preprocess(doc["preprocess"]);
    if (doc.contains("labels")) {
      g.labels_file = get_string(doc["labels"], "labels");
      g.labels = read_labels(g.labels_file);
      g.data_files.push_back((base_dir_ / g.labels_file).string());
    }
    return g;
  }

 private:
  [[noreturn]] void fail(const std::string& cause) const { throw ModelError(path_ + ": " + cause); }

  json parse_json(std::string_view text) {
    int64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<int64_t>(text.size()), kJsonBytesPerTextByte, &bytes)) bytes = INT64_MAX;
    budget_check(bytes, fmt::format("parsing {} of JSON", format_bytes(static_cast<int64_t>(text.size()))));
    StructureCheck check{this, {}};
    try {
      return json::parse(text, [&check](int, json::parse_event_t event, json& parsed) {
        check.see(event, parsed);
        return true;
      });
    } catch (const json::parse_error& e) {
      fail(fmt::format("invalid JSON at byte {}: {}", e.byte, e.what()));
    } catch (const json::exception& e) {
      // Not a syntax error but still unreadable: a number beyond a double's range
      // (1e400) is out_of_range 406.
      fail(fmt::format("invalid JSON: {}", e.what()));
    }
  }

  // Checks the document while the JSON library parses it: its nesting depth, and keys
  // that occur twice in one object (the library would keep the last one silently).
  struct StructureCheck {
    struct Frame {
      bool array = false;
      std::string name;                      // its key in the parent object, or
      int64_t index = 0;                     // its index in the parent array
      int64_t next_index = 0;                // an array's next element
      std::string key;                       // an object's key whose value comes next
      std::unordered_set<std::string> keys;  // an object's keys so far
    };
    const Parser* parser;
    std::vector<Frame> open;  // the containers the parser is inside, outermost first

    void see(json::parse_event_t event, const json& parsed) {
      using E = json::parse_event_t;
      switch (event) {
        case E::object_start:
        case E::array_start: {
          if (open.size() >= kMaxJsonDepth)
            parser->fail(fmt::format("JSON nested more than {} levels deep (at {})", kMaxJsonDepth, excerpt(path())));
          Frame f;
          f.array = event == E::array_start;
          if (!open.empty() && open.back().array) f.index = open.back().next_index++;
          if (!open.empty() && !open.back().array) f.name = open.back().key;
          open.push_back(std::move(f));
          break;
        }
        case E::key: {
          Frame& object = open.back();
          object.key = parsed.get<std::string>();
          if (!object.keys.insert(object.key).second)
            parser->fail(fmt::format("key '{}' appears twice in {} (JSON keys must be unique)", excerpt(object.key),
                                     open.size() == 1 ? "the top level" : excerpt(path())));
          break;
        }
        case E::value:
          if (!open.empty() && open.back().array) ++open.back().next_index;
          break;
        case E::object_end:
        case E::array_end: open.pop_back(); break;
      }
    }

    // Where the innermost open container is: "nodes[2].attrs".
    std::string path() const {
      std::string p;
      for (size_t i = 1; i < open.size(); ++i)
        p += open[i - 1].array ? fmt::format("[{}]", open[i].index) : (i == 1 ? "" : ".") + open[i].name;
      return p;
    }
  };

  // The budget's checks with the file named first.
  void budget_check(int64_t bytes, const std::string& what) const {
    try {
      budget_.check(bytes, what);
    } catch (const OpError& e) {
      fail(e.what());
    }
  }
  void reserve(int64_t bytes, const std::string& what) {
    try {
      budget_.reserve(bytes, what);
    } catch (const OpError& e) {
      fail(e.what());
    }
  }

  void check_keys(const json& obj, const std::string& where, std::initializer_list<const char*> allowed) const {
    for (const auto& item : obj.items()) {
      bool ok = false;
      for (const char* k : allowed) ok = ok || item.key() == k;
      if (!ok) fail(fmt::format("{}: unknown key '{}'", where, item.key()));
    }
  }

  const json& require(const json& obj, const char* key, const std::string& where) const {
    if (!obj.contains(key)) fail(fmt::format("{}: missing key '{}'", where, key));
    return obj[key];
  }

  const json& require_array(const json& obj, const char* key, const std::string& where) const {
    const json& v = require(obj, key, where);
    if (!v.is_array()) fail(fmt::format("{}: '{}' must be an array", where, key));
    return v;
  }

  std::string get_string(const json& v, const std::string& where) const {
    if (!v.is_string()) fail(fmt::format("{} must be a string, got {}", where, json_excerpt(v)));
    return v.get<std::string>();
  }

  // A number as float32; a value past its range is refused (model data and ONNX's float
  // attributes are float32).
  float get_float(const json& v, const std::string& where) const {
    const double d = v.get<double>();
    if (!(std::fabs(d) <= std::numeric_limits<float>::max()))
      fail(fmt::format("{} value {} is outside float32's range", where, json_excerpt(v)));
    return static_cast<float>(d);
  }

  // An integer in int64's range: 2^64-1 is refused as itself, not read as -1, and so is
  // an integer written as a float (1e23). `what` is the value's name.
  int64_t get_int64(const json& v, const std::string& what) const {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(fmt::format("{} {} is beyond the range of 64-bit integers", what, v.get<uint64_t>()));
    // A longer integer parses as a double; shown in its shortest form (1e+23).
    if (const double d = v.is_number_float() ? v.get<double>() : 0; std::trunc(d) == d && !(std::fabs(d) < 0x1.0p63))
      fail(fmt::format("{} {} is beyond the range of 64-bit integers", what, d));
    if (!v.is_number_integer()) fail(fmt::format("{} must be an integer, got {}", what, json_excerpt(v)));
    return v.get<int64_t>();
  }

  Shape get_shape(const json& v, const std::string& where) const {
    if (!v.is_array()) fail(fmt::format("{}: 'shape' must be an array of integers", where));
    Shape s;
    for (const json& d : v) {
      if (!d.is_number()) fail(fmt::format("{}: 'shape' must be an array of integers, got {}", where, json_excerpt(v)));
      int64_t x = get_int64(d, fmt::format("{}: dimension", where));
      if (x <= 0) fail(fmt::format("{}: dimension {} in shape {} must be positive", where, x, json_excerpt(v)));
      s.push_back(x);
    }
    try {
      num_elements(s);
    } catch (const std::overflow_error& e) {
      fail(fmt::format("{}: {}", where, e.what()));
    }
    return s;
  }

  void parse_inputs(const json& inputs, Graph& g) const {
    if (!inputs.is_array()) fail("'inputs' must be an array");
    for (const json& in : inputs) {
      if (!in.is_object()) fail("'inputs' entries must be objects with 'name' and 'shape'");
      const std::string name = get_string(require(in, "name", "an input"), "an input's name");
      const std::string where = fmt::format("input '{}'", name);
      check_keys(in, where, {"name", "shape"});
      g.inputs.push_back({name, get_shape(require(in, "shape", where), where)});
    }
  }

  void parse_initializers(const json& inits, Graph& g) {
    if (!inits.is_object()) fail("'initializers' must be an object mapping names to tensors");
    for (const auto& item : inits.items()) {
      const std::string where = fmt::format("initializer '{}'", item.key());
      const json& v = item.value();
      if (!v.is_object()) fail(where + " must be an object");
      check_keys(v, where, {"shape", "data", "offset", "init", "seed"});
      const Shape shape = get_shape(require(v, "shape", where), where);
      const int64_t n = num_elements(shape);
      std::vector<float> values;
      reserve(tensor_bytes(n), where);
      const int forms = int(v.contains("data")) + int(v.contains("offset")) + int(v.contains("init"));
      if (forms != 1) fail(where + " must have exactly one of 'data', 'offset' or 'init'");
      if (v.contains("seed") && !v.contains("init")) fail(where + ": 'seed' is only valid with \"init\": \"random\"");
      if (v.contains("data")) {
        const json& d = v["data"];
        if (!d.is_array()) fail(where + ": 'data' must be an array of numbers");
        if (static_cast<int64_t>(d.size()) != n)
          fail(fmt::format("{}: 'data' has {} values, shape [{}] needs {}", where, d.size(), fmt::join(shape, ","), n));
        values.reserve(n);
        for (const json& x : d) {
          if (!x.is_number()) fail(fmt::format("{}: 'data' must hold numbers, got {}", where, json_excerpt(x)));
          values.push_back(get_float(x, where + ": 'data'"));
        }
      } else if (v.contains("offset")) {
        values = read_weights(v["offset"], n, where);
      } else {
        const std::string init = get_string(v["init"], where + ": 'init'");
        if (init == "zeros" || init == "ones") {
          if (v.contains("seed")) fail(where + ": 'seed' is only valid with \"init\": \"random\"");
          values.assign(n, init == "ones" ? 1.0f : 0.0f);
        } else if (init == "random") {
          uint64_t seed = default_seed(item.key());
          if (v.contains("seed")) {
            if (!v["seed"].is_number_unsigned()) fail(where + ": 'seed' must be a non-negative integer");
            seed = v["seed"].get<uint64_t>();
          }
          values = random_init(shape, seed);
        } else {
          fail(fmt::format("{}: unknown init '{}' (expected random, zeros or ones)", where, init));
        }
      }
      g.initializers.emplace(item.key(), Tensor(shape, std::move(values)));
    }
  }

  Preprocess parse_preprocess(const json& p) const {
    if (!p.is_object()) fail("'preprocess' must be an object with 'mean' and/or 'std'");
    check_keys(p, "preprocess", {"mean", "std"});
    Preprocess out;
    for (const char* key : {"mean", "std"}) {
      if (!p.contains(key)) continue;
      const json& v = p[key];
      if (!v.is_array() || v.empty())
        fail(fmt::format("preprocess: '{}' must be a non-empty array of numbers, got {}", key, json_excerpt(v)));
      std::vector<float>& values = std::string(key) == "mean" ? out.mean : out.std;
      values.clear();
      for (const json& x : v) {
        if (!x.is_number()) fail(fmt::format("preprocess: '{}' must hold numbers, got {}", key, json_excerpt(x)));
        values.push_back(get_float(x, fmt::format("preprocess: '{}'", key)));
      }
    }
    for (float s : out.std)
      if (!(s > 0)) fail(fmt::format("preprocess: 'std' values must be positive, got {}", s));
    return out;
  }

  // One label per line, in output order.
  std::vector<std::string> read_labels(const std::string& name) {
    std::string text;
    try {
      const InputFile file = open_model_file(base_dir_.string(), name, "labels file");
      // A label costs its std::string (32 bytes) besides its text.
      reserve(static_cast<int64_t>(std::min<uint64_t>(file.size(), INT64_MAX / 64)) * 33,
              fmt::format("labels file '{}'", name));
      text = file.read_all();
    } catch (const FileError& e) {
      fail(e.what());
    }
    std::vector<std::string> labels;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      labels.push_back(line);
    }
    if (labels.empty()) fail(fmt::format("labels file '{}' is empty", name));
    return labels;
  }

  std::vector<float> read_weights(const json& offset_json, int64_t n, const std::string& where) {
    if (!offset_json.is_number_unsigned()) fail(where + ": 'offset' must be a non-negative integer");
    if (weights_path_.empty()) fail(where + " has an 'offset' but the model names no 'weights_file'");
    const uint64_t offset = offset_json.get<uint64_t>();
    const uint64_t bytes = 4 * static_cast<uint64_t>(n);
    const uint64_t size = weights_->size();
    if (offset > size || bytes > size - offset)
      fail(fmt::format("{}: bytes {}..{} are past the end of weights file '{}' ({} bytes)", where, offset,
                       offset + bytes, weights_path_, size));
    std::vector<float> data(n);
    // Only the initializers' bytes are read, never the whole file: its size does not
    // count against the memory limit. The format is little-endian, as is x86.
    try {
      weights_->read_at(offset, reinterpret_cast<char*>(data.data()), bytes);
    } catch (const FileError& e) {
      fail(fmt::format("{}: {}", where, e.what()));
    }
    return data;
  }

  void open_weights_file() {
    try {
      weights_.emplace(open_model_file(base_dir_.string(), weights_path_, "weights file"));
    } catch (const FileError& e) {
      fail(e.what());
    }
  }

  Node parse_node(const json& n) {
    if (!n.is_object()) fail("'nodes' entries must be objects");
    Node node;
    node.name = get_string(require(n, "name", "a node"), "a node's 'name'");
    const std::string where = fmt::format("node '{}'", node.name);
    node.op_type = get_string(require(n, "op", where), where + ": 'op'");
    const std::string ctx = fmt::format("node '{}' ({})", node.name, node.op_type);
    check_keys(n, ctx, {"name", "op", "inputs", "outputs", "attrs"});
    if (!node_names_.insert(node.name).second) fail(fmt::format("{}: a node of that name already exists", ctx));
    for (const json& x : require_array(n, "inputs", ctx)) node.inputs.push_back(get_string(x, ctx + ": inputs[]"));
    // "" omits an optional output, as in ONNX; the op decides which outputs are optional.
    for (const json& x : require_array(n, "outputs", ctx)) node.outputs.push_back(get_string(x, ctx + ": outputs[]"));
    if (n.contains("attrs")) {
      const json& attrs = n["attrs"];
      if (!attrs.is_object()) fail(ctx + ": 'attrs' must be an object");
      for (const auto& a : attrs.items())
        node.attrs.set(a.key(), parse_attr(a.value(), ctx + ": attribute '" + a.key() + "'"));
    }
    return node;
  }

  AttrValue parse_attr(const json& v, const std::string& where) const {
    if (v.is_number_integer()) return get_int64(v, where + " value");
    if (v.is_number()) {
      get_float(v, where);  // in float32's range, where ops read it
      return v.get<double>();
    }
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return static_cast<int64_t>(v.get<bool>());
    if (v.is_array()) {
      bool all_int = true, all_num = true, all_str = true;
      for (const json& x : v) {
        all_int = all_int && x.is_number_integer();
        all_num = all_num && x.is_number();
        all_str = all_str && x.is_string();
      }
      if (all_int) {
        std::vector<int64_t> ints;
        for (const json& x : v) ints.push_back(get_int64(x, where + " value"));
        return ints;
      }
      if (all_num) {
        for (const json& x : v) get_float(x, where);
        return v.get<std::vector<double>>();
      }
      if (all_str) return v.get<std::vector<std::string>>();
    }
    fail(fmt::format("{} must be a number, a string or a list of one of them, got {}", where, json_excerpt(v)));
  }

  std::string path_;
  std::filesystem::path base_dir_;  // where the weights and labels files are
  MemoryBudget budget_;
  std::string weights_path_;
  std::optional<InputFile> weights_;
  std::set<std::string> node_names_;
};

}  // namespace

uint64_t default_seed(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across platforms and runs
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::vector<float> random_init(const Shape& shape, uint64_t seed) {
  const int64_t n = num_elements(shape);
  const int64_t fan_in = shape.size() >= 2 ? n / shape[0] : 0;
  // He-uniform keeps activations at a steady scale through ReLU networks, so a
  // random-weight model neither overflows nor underflows; 1-D tensors get +-0.1.
  const float bound = fan_in > 0 ? static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in))) : 0.1f;
  std::mt19937_64 rng(seed);  // its output sequence is fixed by the standard
  std::vector<float> data(n);
  for (float& x : data) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1), not implementation-defined
    x = static_cast<float>((2.0 * u - 1.0) * bound);
  }
  return data;
}

Graph load_netjson(const std::string& path, int64_t max_memory) {
  // The text itself is checked before it is read; parse() checks what parsing it takes.
  return parse_netjson(read_file_within_limit(path, max_memory), path,
                       std::filesystem::path(path).parent_path().string(), max_memory);
}

Graph parse_netjson(std::string_view text, const std::string& source, const std::string& base_dir, int64_t max_memory) {
  return Parser(source, base_dir, max_memory).parse(text);
}

}  // namespace minfer
