#!/usr/bin/env bash
# Set-up command 2: installs what is missing, builds, and runs the whole test suite;
# then builds the sanitizer preset (AddressSanitizer + UndefinedBehaviorSanitizer, clang,
# build-asan/) and runs the whole suite again under it, with a bounded libFuzzer run of
# each harness (label "fuzz") when Debian's libclang-rt-14-dev provides libFuzzer.
# Prints each phase's duration at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
timings=()
phase() {  # phase <name> <command...>: runs and times one phase
  local name=$1 start=$SECONDS
  shift
  "$@"
  timings+=("$(printf '%-22s %4d s' "$name" $((SECONDS - start)))")
}

bash scripts/install_deps.sh
phase "build" bash scripts/build.sh
phase "tests" ctest --test-dir build --output-on-failure -j "$jobs"

fuzz=OFF
[ -n "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a | grep /)" ] && fuzz=ON
# Only what the tests run: the micro-benchmarks are not tests, and instrumenting them
# would add minutes to the build.
asan_targets="minfer_tests engine_bench engine_check engine_convert"
[ "$fuzz" = ON ] && asan_targets+=" fuzz_netjson fuzz_onnx fuzz_image"
phase "sanitizer build" bash -c "cmake --preset asan -DMINFER_FUZZ=$fuzz >/dev/null &&
                                 cmake --build --preset asan -j $jobs --target $asan_targets"
# teaching_doc reruns the walkthrough's benchmarks to check its prose; instrumented they
# take over ten minutes and exercise nothing the other tests do not. load_memory measures
# peak RSS, which AddressSanitizer's shadow memory and quarantine of freed blocks inflate
# (4.5x a weight there, 2.0x without). Of the per-ISA tests
# (tests/CMakeLists.txt), the kernel tests run for every set the CPU has, the model-level
# ones (ops, engine, conformance, PyTorch models: each set's kernels on whole networks)
# only for the set in use: instrumented, those of the scalar kernels alone take about
# five minutes of CPU, twice an AVX set's.
in_use=$(build/bench/engine_bench --model models/small_cnn.json --num_runs 1 --warmup_runs 0 --format json \
           --peak_gflops 1 --bandwidth_gbs 1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["kernel_isa"])')
others=$(printf '%s\n' scalar avx2 avx512 | grep -vx "$in_use" | sed 's/^/isa_/' | paste -sd '|')
phase "sanitizer tests" ctest --preset asan -j "$jobs" -LE "^(fuzz|$others)\$" -E '^(teaching_doc|load_memory)$'
if [ "$fuzz" = ON ]; then
  phase "fuzz" ctest --preset asan -L fuzz -j "$jobs"
else
  echo "run_tests.sh: clang's libFuzzer runtime (libclang-rt-14-dev) is missing: no fuzz runs" >&2
fi
printf '%s\n' "run_tests.sh timings:" "${timings[@]/#/  }"
