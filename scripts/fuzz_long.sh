#!/usr/bin/env bash
# Long fuzzing runs of the libFuzzer harnesses (tests/fuzz) in the sanitizer build:
#   scripts/fuzz_long.sh [seconds per harness, default 1800] [harness ...]
# Harnesses: netjson, onnx, image (all by default). The corpus each run grows is kept in
# build-asan/tests/fuzz/corpus_<name>, so later runs (and the bounded runs of
# scripts/run_tests.sh) start from it. A crash, leak or timeout stops that harness with
# its input in build-asan/tests/fuzz/findings/; make it a catalogue entry
# (tests/data/bad_models/catalogue.json) once the engine refuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(netjson onnx image)

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)" --target "${harnesses[@]/#/fuzz_}"
dir=build-asan/tests/fuzz
status=0
for name in "${harnesses[@]}"; do
  echo "fuzz_${name}: ${seconds} s"
  mapfile -t flags <"$dir/fuzz_${name}.flags"  # the suite's own flags (tests/fuzz/CMakeLists.txt)
  "$dir/fuzz_${name}" -max_total_time="$seconds" "${flags[@]}" -print_final_stats=1 \
    -artifact_prefix="$dir/findings/${name}-" "$dir/corpus_${name}" "$dir/seeds_${name}" || status=1
done
exit $status
