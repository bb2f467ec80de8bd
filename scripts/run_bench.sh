#!/usr/bin/env bash
# Set-up command 1: installs what is missing, builds, and profiles the bundled
# MobileNetV1 with engine_bench. Extra arguments go to engine_bench.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
./build/bench/engine_bench --model models/mobilenet_v1.json "$@"
