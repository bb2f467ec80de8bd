#!/usr/bin/env bash
# Installs, with apt-get, every Debian 12 package the build, the tests and the
# benchmarks need; does nothing when they are all present already.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config git clang clang-format libclang-rt-14-dev
  # libraries the engine builds on
  libxsimd-dev libomp-dev libstb-dev nlohmann-json3-dev libfmt-dev libcli11-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev libonnx-testdata
  time  # GNU time: the peak RSS of benchmarked processes (bench/compare_common.py)
  # reference models and outputs (PyTorch, ONNX, scikit-learn's digits), headless browser
  python3 python3-numpy python3-torch python3-torchvision python3-onnx python3-sklearn chromium
  # the Python module (python/) and its tests; pandas and matplotlib only for
  # Report.to_pandas() and the example's plot, whose tests skip without them
  pybind11-dev python3-dev python3-pytest python3-pandas python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install_deps.sh: run as root (apt-get install needs it)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
