#!/usr/bin/env bash
# Regenerates docs/report-screenshot.png (the HTML report of MobileNet V1) and
# docs/compare-screenshot.png (the top of the compare page of MobileNet V1 against
# V2 1.4) with headless Chromium. Needs a build (scripts/build.sh) and chromium.
#   scripts/screenshots.sh [build folder, default build]
set -euo pipefail
cd "$(dirname "$0")/.."
bench="${1:-build}/bench/engine_bench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

shoot() {  # page, width, height, png
  timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
    --user-data-dir="$work/profile" --window-size="$2,$3" --screenshot="$4" "file://$1" > /dev/null 2>&1
}

"$bench" --model models/mobilenet_v1.json --num_runs 10 --html "$work/report.html" > /dev/null
"$bench" --compare models/mobilenet_v1.json models/mobilenet_v2_1_4.json --num_runs 10 \
  --html "$work/compare.html" > /dev/null
shoot "$work/report.html" 1280 4200 docs/report-screenshot.png
shoot "$work/compare.html" 1280 1500 docs/compare-screenshot.png
echo "wrote docs/report-screenshot.png and docs/compare-screenshot.png"
