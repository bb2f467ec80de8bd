#pragma once

#include <string>

namespace minfer::test {

// A folder for the running test: <root>/<suite>.<test>/<name>, created if missing.
// <root> is one folder per test process made by mkdtemp (a reused process id finds no
// leftovers of an earlier run, and concurrent processes never share a path) and removed
// with everything in it when the process exits.
std::string temp_dir(const std::string& name);

void write_file(const std::string& path, const std::string& bytes);

}  // namespace minfer::test
