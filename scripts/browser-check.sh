#!/usr/bin/env bash
# Load a wfx HTML report in headless Chromium and check what a reader sees:
#  1. the layout, measured by Chromium at a narrow (500 px) and a wide
#     (1280 px) window on a copy with a measuring script: the page never
#     scrolls sideways, every table stays inside its own box (scrolling
#     there on a narrow window), and at the wide window every table fits
#     without scrolling; measured with every <details> block open;
#  2. the DOM holds the pass-rate chart and the tables (phases for a
#     test-fix session, steps for a `wfx run` session) and the report has
#     no script of its own;
#  3. a screenshot (wide window) is not blank, and the colour of each
#     chart point is read from its pixels: one line per point,
#     `point ITERATION ring=#rrggbb centre=#rrggbb` (the ring is the
#     strategy colour; the centre is white on hollow, affected-subset runs).
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

# 1. The layout at a narrow and a wide window, measured by Chromium itself
#    on a copy of the report with a measuring script appended (the report
#    has none); the copy lives in the scratch dir, the report is untouched.
python3 - "$report" "$work/measured.html" <<'PY'
import sys
html = open(sys.argv[1], encoding="utf-8").read()
probe = r"""<script>
(function () {
  function box(e) { var r = e.getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.right + scrollX, r.bottom + scrollY]; }
  // The chart points as the screenshot (the report as loaded) has them.
  var points = [];
  document.querySelectorAll('svg.chart g.run circle').forEach(function (c) {
    var b = box(c);
    points.push({iteration: c.parentNode.getAttribute('data-iteration'), x: (b[0] + b[2]) / 2, y: (b[1] + b[3]) / 2, r: (b[2] - b[0]) / 2});
  });
  // The layout with every collapsible block open (fix diffs, failing
  // tests, outputs): what a reader opens must fit too.
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var out = {viewport: document.documentElement.clientWidth, page: document.documentElement.scrollWidth,
             main: box(document.querySelector('main')), tables: [], points: points,
             details: document.querySelectorAll('details').length};
  document.querySelectorAll('table').forEach(function (t) {
    out.tables.push({name: t.className, table: box(t), box: box(t.parentElement), fits: t.offsetWidth <= t.parentElement.clientWidth + 0.5});
  });
  var pre = document.createElement('pre'); pre.id = 'wfx-layout'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""
at = html.rfind("</body>")
assert at >= 0, "no </body> in the report"
open(sys.argv[2], "w", encoding="utf-8").write(html[:at] + probe + html[at:])
PY
for width in 500 1280; do
  if ! "$browser" "${flags[@]}" --window-size="$width,1600" --dump-dom "file://$work/measured.html" \
    >"$work/layout-$width.html" 2>"$work/layout-$width.err"; then
    cat "$work/layout-$width.err" >&2
    echo "browser-check: chromium --dump-dom of the measured copy failed" >&2
    exit 1
  fi
done

# 2. The DOM as the browser built it (the wide dump of the measured copy:
#    the report's own elements plus the one measuring script).
cp "$work/layout-1280.html" "$work/dom.html"
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
if grep -q '<script' "$report" || [ "$(grep -o '<script' "$work/dom.html" | wc -l)" != 1 ]; then
  echo "browser-check: the report contains a <script> element" >&2
  fail=1
fi
[ "$fail" = 0 ] || exit 1

# 3. The layout checks.
python3 - "$work" <<'PY'
import html, json, re, sys
work = sys.argv[1]
fail = False
for width in (500, 1280):
    dom = open(f"{work}/layout-{width}.html", encoding="utf-8").read()
    m = re.search(r'<pre id="wfx-layout">([^<]*)</pre>', dom)
    if not m:
        sys.exit("browser-check: the measuring script did not run")
    lay = json.loads(html.unescape(m.group(1)))
    json.dump(lay, open(f"{work}/layout-{width}.json", "w"))
    if lay["page"] > lay["viewport"]:
        print(f"browser-check: at {width} px the page is {lay['page']} px wide: it scrolls sideways", file=sys.stderr)
        fail = True
    right = lay["main"][2] + 0.5
    for t in lay["tables"]:
        if t["box"][2] > right:
            print(f"browser-check: at {width} px the {t['name']} table's box overflows the page ({t['box'][2]:.0f} > {right:.0f})", file=sys.stderr)
            fail = True
        if width >= 1280 and not t["fits"]:
            print(f"browser-check: at {width} px the {t['name']} table is wider than its column ({t['table'][2] - t['table'][0]:.0f} px)", file=sys.stderr)
            fail = True
    names = sorted({t["name"] for t in lay["tables"]})
    scrolling = sorted({t["name"] for t in lay["tables"] if not t["fits"]})
    print(f"layout {width}: page {lay['page']}/{lay['viewport']} px with {lay['details']} blocks open; tables {' '.join(names)}; "
          f"scrolling inside their box: {' '.join(scrolling) or 'none'}")
if fail:
    sys.exit(1)
PY

# 4. A screenshot of the report itself (wide window, tall enough for every
#    chart point) that is not blank, and the colours at the chart points.
height=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1])); print(max([1600] + [int(p["y"]) + 60 for p in l["points"]]))' "$work/layout-1280.json")
if ! "$browser" "${flags[@]}" --window-size="1280,$height" --screenshot="$work/shot.png" "$url" \
  >"$work/shot.out" 2>"$work/shot.err" || [ ! -s "$work/shot.png" ]; then
  cat "$work/shot.err" >&2
  echo "browser-check: chromium --screenshot failed" >&2
  exit 1
fi
[ -z "$keep" ] || cp "$work/shot.png" "$keep"

python3 - "$work/shot.png" "$work/layout-1280.json" <<'PY'
# Decode the PNG with the standard library only (zlib + struct), count
# distinct colours (a blank or failed render has one or two) and read the
# pixels of each chart point.
import json, struct, sys, zlib

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
rows = []
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
    rows.append(bytes(line))
    prev = line
total = sum(colours.values())
top = max(colours.values())
print(f"screenshot: {width}x{height}, {len(colours)} distinct colours, the most common covers {100 * top / total:.1f}%")
if len(colours) < 8:
    sys.exit("browser-check: the screenshot looks blank (fewer than 8 distinct colours)")

def pixel(x, y):
    x, y = int(x), int(y)
    if not (0 <= x < width and 0 <= y < height):
        return None
    if bpp in (1, 2):
        v = rows[y][x * bpp]
        return f"#{v:02x}{v:02x}{v:02x}"
    r, g, b = rows[y][x * bpp:x * bpp + 3]
    return f"#{r:02x}{g:02x}{b:02x}"

# The ring: the middle of the circle's stroke, right of the centre (the
# rollback cross runs diagonally and leaves it alone).
for p in json.load(open(sys.argv[2]))["points"]:
    ring, centre = pixel(p["x"] + p["r"], p["y"]), pixel(p["x"], p["y"])
    if ring is None:
        sys.exit(f"browser-check: chart point {p['iteration']} lies outside the screenshot")
    print(f"point {p['iteration']} ring={ring} centre={centre}")
PY
echo "browser-check: ok"
