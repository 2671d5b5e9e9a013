#!/usr/bin/env bash
# Renders a scenario's HTML timeline (`mockble run FILE --format html`) in headless Chromium
# and saves a screenshot, to check that the page renders and to look at it.
#
#   scripts/render-timeline.sh [SCENARIO] [PNG]
#
# SCENARIO defaults to Fixtures/scenarios/faults-realistic.json (realistic mode: faults, a
# lost link, failures that were expected); PNG defaults to .build/timeline/NAME.png, next to
# the page (.build/timeline/NAME.html). The screenshot is as tall as the header and the
# timeline (the step table below them is left out), at most 16000 pixels; HEIGHT=N makes it
# N pixels tall instead (the top of the page: how README's picture, docs/images/, is made).
#
# Needs Chromium. On Debian or Ubuntu: `sudo apt-get install chromium` (Ubuntu's package may
# be `chromium-browser`); elsewhere set CHROMIUM to a Chrome or Chromium binary. The browser
# is not part of the CI run (.ci/run): this script is for people.
set -euo pipefail
cd "$(dirname "$0")/.."

scenario="${1:-Fixtures/scenarios/faults-realistic.json}"
name="$(basename "$scenario" .json)"
png="${2:-.build/timeline/$name.png}"

browser="${CHROMIUM:-}"
if [ -z "$browser" ]; then
    for candidate in chromium chromium-browser google-chrome; do
        if command -v "$candidate" > /dev/null; then browser="$(command -v "$candidate")"; break; fi
    done
fi
if [ -n "$browser" ] && ! command -v "$browser" > /dev/null; then
    echo "render-timeline: CHROMIUM=$browser is not a program this shell can run" >&2
    exit 2
fi
if [ -z "$browser" ]; then
    echo "render-timeline: no Chromium found. Install Debian's package with" >&2
    echo "  sudo apt-get install chromium" >&2
    echo "or set CHROMIUM=/path/to/chromium (any Chrome or Chromium with --headless)." >&2
    exit 2
fi

swift build --product mockble -q
mockble="$(swift build --show-bin-path)/mockble"
mkdir -p .build/timeline "$(dirname "$png")"
page="$PWD/.build/timeline/$name.html"
# Exit status 1 (an expectation failed) still writes the page; only bad input stops here.
status=0
"$mockble" run "$scenario" --format html --out "$page" || status=$?
if [ "$status" -eq 2 ]; then echo "render-timeline: bad scenario: $scenario" >&2; exit 2; fi

# The page must stand alone: nothing to fetch.
if grep -Eqi 'https?://|src=|<link|<script|@import' "$page"; then
    echo "render-timeline: $page refers to something outside itself" >&2
    exit 1
fi

# As tall as the header (about 340 px at this width) and the timeline's picture.
svg_height="$(grep -o '<svg [^>]*' "$page" | head -n 1 | sed -n 's/.* height="\([0-9]*\)".*/\1/p')"
width=1340
height=$(( ${svg_height:-2000} + 340 ))
if [ "$height" -gt 16000 ]; then height=16000; fi
if [ -n "${HEIGHT:-}" ]; then height="$HEIGHT"; fi

log=".build/timeline/$name.chromium.log"
# --no-sandbox: Chromium refuses to run as root with its sandbox (containers, CI machines).
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --mute-audio)
# The DOM Chromium built: the timeline must be there, parsed as SVG.
if ! timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" > ".build/timeline/$name.dom.html" 2> "$log"; then
    echo "render-timeline: Chromium could not load $page (see $log)" >&2
    exit 1
fi
if ! grep -q '</svg>' ".build/timeline/$name.dom.html"; then
    echo "render-timeline: the page Chromium loaded has no timeline (see .build/timeline/$name.dom.html)" >&2
    exit 1
fi
case "$png" in /*) target="$png" ;; *) target="$PWD/$png" ;; esac
rm -f "$target"
timeout 120 "$browser" "${flags[@]}" --screenshot="$target" --window-size="$width,$height" \
    "file://$page" >> "$log" 2>&1 || true
if [ ! -s "$png" ]; then
    echo "render-timeline: Chromium made no screenshot (see $log)" >&2
    exit 1
fi
# The PNG's own size, from its IHDR chunk (bytes 16-23: width and height, big-endian).
read -r png_width png_height < <(od -An -tu1 -j16 -N8 "$png" |
    awk '{print $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8}')
echo "page:       $page"
echo "screenshot: $png (${png_width}x${png_height})"
