// The public C++ API: load a model, compile it, run sessions, read the profile.
//
//   minfer::Graph g = minfer::load_model("models/mobilenet_v1.json");
//   auto model = minfer::compile(std::move(g), {.num_threads = 2});
//   minfer::Session s(model);
//   s.set_input("input", pixels);
//   s.run();
//   auto prob = s.output("prob");
#pragma once

#include "engine/compiled_model.h"
#include "engine/image_input.h"
#include "engine/profile_report.h"
#include "engine/session.h"
#include "graph/errors.h"
#include "graph/model_loader.h"
#include "profiler/machine_model.h"
#include "profiler/report.h"
#include "profiler/report_html.h"
#include "profiler/trace_writer.h"
