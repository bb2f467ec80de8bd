// Every file the tools write goes through here: reports, traces, HTML pages,
// engine_convert's models and weights, the machine cache.
//
// A file is written to a temporary file of a fresh name in its folder (created
// exclusively, so nothing at that name, a planted symbolic link included, is ever
// followed or overwritten) and renamed into place once everything succeeded: a failed
// run leaves no partial file and the previous one intact, and concurrent runs onto one
// path each replace it whole. A symbolic link at the path itself is replaced, not
// followed. A path that exists and is not a regular file (a device such as /dev/null,
// a FIFO) is written in place, and one that names a descriptor of this process
// (/dev/stdout, /dev/fd/N) through that descriptor: neither is ever replaced.
//
// In graph/, the lowest layer, so that the tools (bench/) and the machine cache
// (profiler/) share it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace minfer {

// An output path and what names it in messages (a flag such as "--trace").
struct OutputPath {
  std::string name, path;
};

// Refuses, with a UsageError, two outputs that are one file: the same path once made
// absolute with its links resolved ("x" and "./x"), or one existing file under two
// names; and an output that would replace one of `inputs`, the files the tool reads.
// Tools call it before doing any work.
void check_distinct_outputs(const std::vector<OutputPath>& outputs, const std::vector<OutputPath>& inputs = {});

// Writes files that belong together, (path, contents) each: all are complete before
// any is renamed into place, so a failure (a missing folder, a full disk, /dev/full)
// leaves none of them, and no previous file removed. Throws a UsageError,
// "<path>: <cause>". Checks the paths with check_distinct_outputs first.
void write_files(const std::vector<std::pair<std::string, std::string>>& files);

// Writes to the standard output; a failed write (a full disk, a closed descriptor) is a
// UsageError, "stdout: cannot write (<cause>)", not a silently short report.
void write_stdout(const std::string& text);

}  // namespace minfer
