#!/usr/bin/env bash
# Installs ONNX Runtime (onnxruntime-node, CPU) into bench/ort/node_modules for
# bench/compare_ort.py; node and npm come from Debian's nodejs and npm packages.
# --ignore-scripts skips onnxruntime-node's install script, which downloads the CUDA
# build (it fails offline and the comparison runs on the CPU only).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup.sh: node and npm are missing: apt-get install -y nodejs npm" >&2
  exit 1
fi
npm ci --ignore-scripts --no-audit --no-fund
node -e 'const ort = require("onnxruntime-node"); console.log("onnxruntime-node", ort.env.versions.node || ort.env.versions.common)'
