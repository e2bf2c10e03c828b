#!/usr/bin/env bash
# Load a wfx HTML report in headless Chromium and check what a reader sees:
# the DOM holds the pass-rate chart and the tables (phases for a test-fix
# session, steps for a `wfx run` session), and a screenshot is not blank
# (it has several distinct colours).
#
#   scripts/browser-check.sh REPORT.html [SCREENSHOT.png]
#
# Installs Debian's `chromium` when no Chromium is on PATH (apt-get, as root
# or through sudo). SCREENSHOT.png, when given, keeps the screenshot.
set -euo pipefail

report=${1:?usage: scripts/browser-check.sh REPORT.html [SCREENSHOT.png]}
keep=${2:-}
[ -f "$report" ] || { echo "browser-check: no such file: $report" >&2; exit 2; }

find_chromium() {
  local c
  for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return 0; fi
  done
  return 1
}

if ! browser=$(find_chromium); then
  echo "browser-check: chromium not found, installing Debian's chromium (about 100 MB)" >&2
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
  browser=$(find_chromium)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
url="file://$(realpath "$report")"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --hide-scrollbars --user-data-dir="$work/profile")

# 1. The DOM as the browser built it.
if ! "$browser" "${flags[@]}" --dump-dom "$url" >"$work/dom.html" 2>"$work/dom.err"; then
  cat "$work/dom.err" >&2
  echo "browser-check: chromium --dump-dom failed" >&2
  exit 1
fi
fail=0
need() {
  local what=$1 pattern=$2 n
  n=$(grep -o -- "$pattern" "$work/dom.html" | wc -l)
  if [ "$n" -lt 1 ]; then
    echo "browser-check: DOM lacks $what ($pattern)" >&2
    fail=1
  else
    echo "dom: $what x$n"
  fi
}
need "the chart" '<svg[^>]*class="chart"'
need "the threshold line" '<g class="threshold">'
need "the outcome" '<section id="outcome"'
# A test-fix session has a phase table; a `wfx run` session a step table.
need "the phase or step table" '<table class="\(phases\|steps\)">'
need "the artifact table" '<table class="artifacts">'
if grep -q '<script' "$work/dom.html"; then
  echo "browser-check: the DOM contains a <script> element" >&2
  fail=1
fi
[ "$fail" = 0 ] || exit 1

# 2. A screenshot that is not blank.
if ! "$browser" "${flags[@]}" --window-size=1280,1600 --screenshot="$work/shot.png" "$url" \
  >"$work/shot.out" 2>"$work/shot.err" || [ ! -s "$work/shot.png" ]; then
  cat "$work/shot.err" >&2
  echo "browser-check: chromium --screenshot failed" >&2
  exit 1
fi
[ -z "$keep" ] || cp "$work/shot.png" "$keep"

python3 - "$work/shot.png" <<'PY'
# Decode the PNG with the standard library only (zlib + struct) and count
# distinct colours: a blank or failed render has one or two.
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    (length,) = struct.unpack(">I", data[pos:pos + 4])
    kind = data[pos + 4:pos + 8]
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
width, height, depth, ctype, _, _, interlace = ihdr
assert depth == 8 and interlace == 0, f"unsupported PNG (depth {depth}, interlace {interlace})"
bpp = {2: 3, 6: 4, 0: 1, 4: 2}[ctype]
raw = zlib.decompress(idat)
stride = width * bpp
prev = bytearray(stride)
colours = {}
for y in range(height):
    start = y * (stride + 1)
    ftype = raw[start]
    line = bytearray(raw[start + 1:start + 1 + stride])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if ftype == 1:
            line[i] = (line[i] + a) & 255
        elif ftype == 2:
            line[i] = (line[i] + b) & 255
        elif ftype == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif ftype == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pred) & 255
    for x in range(0, stride, bpp * 4):
        px = bytes(line[x:x + min(bpp, 3)])
        colours[px] = colours.get(px, 0) + 1
    prev = line
total = sum(colours.values())
top = max(colours.values())
print(f"screenshot: {width}x{height}, {len(colours)} distinct colours, the most common covers {100 * top / total:.1f}%")
if len(colours) < 8:
    sys.exit("browser-check: the screenshot looks blank (fewer than 8 distinct colours)")
PY
echo "browser-check: ok"
