#!/usr/bin/env bash
# The HTML report in a real browser (headless Chromium): the page's hooks match the evidence it
# was drawn from (one request mark per request in the record, the state bands in transitions.log's
# order, the failing step marked, every refusal of a cb-lab run), and the page loads nothing and
# logs nothing. A page that does fetch something is caught the same way (the check can fail).
# Screenshots are kept in SHOTS.
#   html_report_test.sh CB-GRADE CB-LAB SHOTS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
grade=$(realpath "$1")
lab=$(realpath "$2")
shots=$3
mkdir -p "$shots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fixtures=$project/tests/fixtures/submissions
command -v chromium >/dev/null || { echo "chromium is not installed (scripts/install-deps installs it)" >&2; exit 1; }

browser() {  # browser PAGE EXTRA-ARGS...: headless Chromium, its console on stderr
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" \
    --enable-logging=stderr --v=0 --window-size=1200,1400 "${@:2}" "file://$1"
}
dom() { browser "$1" --dump-dom 2>"$1.log"; }
quiet() {  # quiet PAGE: nothing the page did reached the console (CSP refusals, script errors)
  if grep -E 'CONSOLE|Refused to|Uncaught' "$1.log"; then echo "$1: the page logged the above" >&2; exit 1; fi
}
shot() { browser "$1" --screenshot="$shots/$2.png" >/dev/null 2>&1; [ -s "$shots/$2.png" ]; }

# 1. A failing submission graded on its saved record.
sub=$fixtures/closes-after-one-trial
"$grade" --dir "$sub" --record "$sub/record.json" --format html -o "$tmp/fail.html" || [ $? -eq 1 ]
dom "$tmp/fail.html" >"$tmp/fail.dom"
quiet "$tmp/fail.html"
/usr/bin/python3 - "$tmp/fail.dom" "$sub/record.json" "$sub/transitions.log" <<'PY'
import json, re, sys
from html.parser import HTMLParser

class Hooks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.seqs, self.statuses, self.bands, self.steps, self.urls = [], {}, [], {}, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for n in a.get("data-seq", "").split():  # a mark lists every request it stands for
            self.seqs.append(int(n))
            self.statuses[int(n)] = a["data-status"]
        if "data-state" in a:
            self.bands.append((a["data-state"], float(a["data-from-ms"]), float(a["data-to-ms"])))
        if tag == "g" and "data-step" in a:
            self.steps[int(a["data-step"])] = a["data-status"]
        for k, v in a.items():
            if k != "xmlns" and (k in ("src", "href") or (v and re.match(r"\s*(https?:)?//", v))):
                self.urls.append((tag, k, v))

h = Hooks()
h.feed(open(sys.argv[1]).read())
record = json.load(open(sys.argv[2]))
entries = [e for e in record["entries"] if not e["path"].startswith("/admin")]
assert sorted(h.seqs) == [e["seq"] for e in entries], (h.seqs, [e["seq"] for e in entries])
for e in entries:
    assert h.statuses[e["seq"]] == (str(e["status"]) if e.get("status") is not None else "none"), e
lines = [l.split()[-1] for l in open(sys.argv[3]) if l.strip()]
want = [lines[0].split("->")[0]] + [l.split("->")[1] for l in lines]
assert [b[0] for b in h.bands] == want, (h.bands, want)
assert all(b[1] <= b[2] for b in h.bands) and all(x[2] == y[1] for x, y in zip(h.bands, h.bands[1:])), h.bands
assert h.steps == {1: "pass", 2: "pass", 3: "pass", 4: "pass", 5: "pass", 6: "fail", 7: "pass", 8: "pass"}, h.steps
assert not h.urls, h.urls
print(f"failing submission: {len(h.seqs)} request marks, bands {want}, step 6 marked failed")
PY
grep -q '1 trial(s), then CLOSED' "$tmp/fail.dom"
shot "$tmp/fail.html" closes-after-one-trial
# It prints: Chromium's print path makes a PDF of it.
browser "$tmp/fail.html" --no-pdf-header-footer --print-to-pdf="$shots/closes-after-one-trial.pdf" >/dev/null 2>&1
head -c 5 "$shots/closes-after-one-trial.pdf" | grep -q '%PDF-'
[ "$(stat -c %s "$shots/closes-after-one-trial.pdf")" -gt 10000 ]

# 2. A whole cb-lab run, refusals included (only the program that refused knows them).
"$lab" run --dir "$tmp/run" --html "$tmp/run.html" >/dev/null
dom "$tmp/run.html" >"$tmp/run.dom"
quiet "$tmp/run.html"
refused=$(grep -o 'data-refused-ms=' "$tmp/run.dom" | wc -l)
[ "$refused" -eq 12 ] || { echo "cb-lab run --html: $refused refusal marks, want 12 (2 in step 3, 10 in step 4)" >&2; exit 1; }
grep -q '3 trial(s), then CLOSED' "$tmp/run.dom"
[ "$(grep -o 'data-step="[0-9]" data-status="pass"' "$tmp/run.dom" | wc -l)" -eq 8 ]
shot "$tmp/run.html" cb-lab-run
echo "cb-lab run: 12 refusals drawn, 3 trials, 8 steps passed"

# 3. A ten-minute run: the good submission's record with its requests spread 30 s apart. The
# axis is cut at each idle stretch, says so, and every mark stays on the picture.
/usr/bin/python3 - "$fixtures/good/record.json" "$tmp/long.json" <<'PY'
import datetime, json, sys
r = json.load(open(sys.argv[1]))
for i, e in enumerate(r["entries"]):
    w = datetime.datetime.strptime(e["wall"], "%Y-%m-%dT%H:%M:%S.%fZ") + datetime.timedelta(seconds=30 * i)
    e["wall"] = w.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    e["t_ms"] += 30000 * i
json.dump(r, open(sys.argv[2], "w"))
PY
"$grade" --dir "$fixtures/good" --record "$tmp/long.json" --format html -o "$tmp/long.html" || true
dom "$tmp/long.html" >"$tmp/long.dom"
quiet "$tmp/long.html"
/usr/bin/python3 - "$tmp/long.dom" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
gaps = re.findall(r'data-idle-ms="([0-9.]+)"', page)
assert len(gaps) >= 15 and all(float(g) > 20000 for g in gaps), gaps
assert "The axis is cut at" in page
xs = [float(x) for x in re.findall(r'data-seq="[0-9 ]+" data-status="[^"]*" x="([0-9.]+)"', page)]
assert len(xs) == 21 and all(150 <= x <= 1080 for x in xs), xs
assert "10 min" in page or "9 min" in page, "the run's length is said"
print(f"ten-minute run: {len(gaps)} idle stretches cut, 21 marks on the picture")
PY
shot "$tmp/long.html" ten-minute-run

# 4. A dense record: 10,000 requests in ten minutes, a 500 every seventh. Requests of one row and
# status that share a pixel column are one mark; every request is in exactly one mark, with its
# own status, and there are far fewer marks than requests.
/usr/bin/python3 "$here/dense_record.py" "$fixtures/good/record.json" "$tmp/dense.json" 7
"$grade" --dir "$fixtures/good" --record "$tmp/dense.json" --format html -o "$tmp/dense.html" || true
dom "$tmp/dense.html" >"$tmp/dense.dom"
quiet "$tmp/dense.html"
/usr/bin/python3 - "$tmp/dense.dom" "$tmp/dense.json" <<'PY'
import json, re, sys
page, record = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
marks = re.findall(r'data-seq="([0-9 ]+)" data-status="([^"]*)" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"', page)
seen = {}
for seqs, status, x, w in marks:
    assert 150 <= float(x) and float(x) + float(w) <= 1100, (x, w)  # inside the picture
    for n in map(int, seqs.split()):
        assert n not in seen, f"request {n} drawn twice"
        seen[n] = status
want = {e["seq"]: str(e["status"]) for e in record["entries"] if not e["path"].startswith("/admin")}
assert seen == want, (len(seen), len(want), sorted(set(want) ^ set(seen))[:10])
assert len(marks) < 3000, f"{len(marks)} marks for {len(want)} requests: nothing shares a mark"
print(f"dense record: {len(want)} requests in {len(marks)} marks, each request in exactly one")
PY
shot "$tmp/dense.html" dense-record

# 5. The scenes as pictures: each page's hooks against the same scene's --json (simulated: exact).
for scene in payments pool toggle fleet; do
  "$lab" scene "$scene" --json --html "$tmp/$scene.html" >"$tmp/$scene.json"
  dom "$tmp/$scene.html" >"$tmp/$scene.dom"
  quiet "$tmp/$scene.html"
  /usr/bin/python3 - "$scene" "$tmp/$scene.json" "$tmp/$scene.dom" <<'PY'
import json, re, sys
scene, data, page = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
results = [r for st in data["steps"] for r in st["results"]]
attrs = lambda name: re.findall(name + r'="([^"]*)"', page)
if scene == "payments":
    want = [c["happened"] for r in results for c in r["charges"]]
    assert attrs("data-happened") == want, (attrs("data-happened"), want)
elif scene == "pool":
    want = [s["in_use"] for r in results for s in r["samples"]]
    assert [int(v) for v in attrs("data-in-use")] == want
    assert len(attrs("data-exhausted_s")) == sum(1 for r in results if r["exhausted_s"] is not None)
elif scene == "toggle":
    per = [s for r in results for s in r["per_second"]]
    assert [int(v) for v in attrs("data-answered")] == [s["answered"] for s in per]
    assert [int(v) for v in attrs("data-fallback")] == [s["fallback"] for s in per]
    assert [v for v in attrs("data-state") if v] == [s["state"] for s in per]
    assert set(attrs("data-server")) == {"healthy", "failing"}
    assert "with the recursive retry inside" in page
elif scene == "fleet":
    want = [(i, n) for r in results for run in r["runs"] for i, n in enumerate(run["per_second"]) if n]
    got = [(int(i), int(n)) for i, n in re.findall(r'data-second="(\d+)" data-trials="(\d+)"', page)]
    assert got == want, (got[:10], want[:10])
print(f"scene {scene}: the picture holds what --json says")
PY
  shot "$tmp/$scene.html" "scene-$scene"
done

# 6. The check can fail: a page that fetches something is caught by the same test.
sed 's|<body>|<body><img src="http://127.0.0.1:9/x.png" alt="">|' "$tmp/fail.html" >"$tmp/leaky.html"
dom "$tmp/leaky.html" >/dev/null
if ( quiet "$tmp/leaky.html" ) >/dev/null 2>&1; then echo "a page that fetches an image was not caught" >&2; exit 1; fi
echo "html report: 6 cases passed; screenshots in $shots"
