#!/usr/bin/env bash
# Retake the README's report screenshots (docs/screenshots/*.png) from the demo's reports.
# Run `make demo` first; needs Debian's chromium-headless-shell (or chromium). No network is used:
# the reports are self-contained files opened from file://.
#   docs/screenshots.sh [DEMO_DIR]        (default out/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
demo="${1:-out/demo}"
out="docs/screenshots"
browser="$(command -v chromium-headless-shell || command -v chromium || true)"
if [ -z "$browser" ]; then
  echo "error: chromium-headless-shell not found (apt-get install chromium-headless-shell)" >&2
  exit 2
fi
mkdir -p "$out"
for report in compare leaderboard reruns item paper; do
  page="$demo/$report.html"
  [ "$report" = paper ] && page="$demo/paper/index.html"
  if [ ! -f "$page" ]; then
    echo "error: $(pwd)/$page does not exist: run make demo first" >&2
    exit 2
  fi
  # the virtual-time budget lets the inlined Vega charts render before the picture is taken
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1600 \
    --virtual-time-budget=8000 --screenshot="$out/$report.png" "file://$(pwd)/$page" >/dev/null 2>&1
  echo "$out/$report.png"
done
