#!/usr/bin/env bash
# The class page (REPORTS/index.html) in a real browser (headless Chromium): a small class graded
# with --batch --reports shows every student once, linked to a report that is there, ranks the
# failing check and conformance rule with the students they hit, names what could not be graded;
# its one script (allowed by its hash, nothing else) sorts the table; it loads nothing and logs
# nothing. Then 300 students (a kept grade copied 300 times, regraded: nothing runs) make a page
# that stays small and renders. Screenshots are kept in SHOTS.
#   class_page_test.sh CB-GRADE CB-LAB SHOTS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
grade=$(realpath "$1")
lab=$(realpath "$2")
shots=$3
mkdir -p "$shots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v chromium >/dev/null || { echo "chromium is not installed (scripts/install-deps installs it)" >&2; exit 1; }
browser() {  # browser URL EXTRA-ARGS...: headless Chromium, its console on stderr
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" \
    --enable-logging=stderr --v=0 --window-size=1280,1800 "${@:2}" "$1"
}
quiet() {  # quiet LOG: nothing the page did reached the console (CSP refusals, script errors)
  if grep -E 'CONSOLE|Refused to|Uncaught' "$1"; then echo "class page: the page logged the above" >&2; exit 1; fi
}

# A right kit, one with > for >= (step 3 and trip_at_threshold), one that crashes, an empty one.
kit() { "$lab" init "$tmp/class/$1" --lang python >/dev/null; cp "$project/tests/kits/python/breaker.py" "$tmp/class/$1/"; }
kit ann
kit ben
sed -i 's/sum(self.window) \* 100 >= self.failure_rate_percent/sum(self.window) * 100 > self.failure_rate_percent/' \
  "$tmp/class/ben/breaker.py"
kit cat
printf 'echo boom >&2\nexit 3\n' >"$tmp/class/cat/run.sh"
mkdir "$tmp/class/dan"
"$grade" --batch "$tmp/class" --run "sh run.sh" --conformance "sh replay.sh" --traces 30 --seed 5 -j 2 \
  --reports "$tmp/reports" -o "$tmp/book.csv" 2>/dev/null || [ $? -eq 1 ]
page=$tmp/reports/index.html
[ -s "$page" ] || { echo "class page: --batch --reports wrote no index.html" >&2; exit 1; }
# Sorted by score (column 1), as a link can ask.
browser "file://$page#sort=1" --dump-dom >"$tmp/dom.html" 2>"$tmp/dom.log"
quiet "$tmp/dom.log"
browser "file://$page" --screenshot="$shots/class-page.png" >/dev/null 2>&1
[ -s "$shots/class-page.png" ]
/usr/bin/python3 - "$tmp/dom.html" "$tmp/reports" <<'PY'
import os, re, sys
from html.parser import HTMLParser

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.in_everyone = self.in_row = False
        self.rows, self.cell, self.links, self.text = [], None, [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("class") == "everyone":
            self.in_everyone = True
        if tag == "a":
            self.links.append(a["href"])
        if self.in_everyone and tag == "tr":
            self.row = []
        if self.in_everyone and tag == "td":
            self.cell = ""
    def handle_endtag(self, tag):
        if self.in_everyone and tag == "td":
            self.row.append(self.cell.strip())
            self.cell = None
        if self.in_everyone and tag == "tr" and self.row:
            self.rows.append(self.row)
        if tag == "table":
            self.in_everyone = False
    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell += data

p = Page()
p.feed(open(sys.argv[1]).read())
text = "".join(p.text)
names = [r[0] for r in p.rows]
assert sorted(names) == ["ann", "ben", "cat", "dan"], names
scores = [float(r[1].split("/")[0]) for r in p.rows]
assert scores == sorted(scores), scores
assert names[0] == "dan" and names[-1] == "ann", ("the script sorted the table by score", names)
for href in p.links:
    assert os.path.isfile(os.path.join(sys.argv[2], href)), ("a link leads nowhere", href)
assert "s3.trip" in text and "trip_at_threshold" in text, "the failing check and rule are ranked"
assert re.search(r"Programs that never called the server\s*cat", text), "the crash is named once"
assert re.search(r"dan \(empty\): the folder is empty", text), "what was not graded, and why"
PY

# A regrade of the reports alone titles the page for the class (its root folder), as the batch did.
grep -q "<title>Class: class</title>" "$page" || { echo "class page: the batch's title is $(grep -o '<title>[^<]*' "$page")" >&2; exit 1; }
"$grade" --regrade "$tmp/reports" -o "$tmp/regraded.csv" 2>/dev/null || [ $? -eq 1 ]
grep -q "<title>Class: class</title>" "$page" ||
  { echo "class page: after --regrade the title is $(grep -o '<title>[^<]*' "$page")" >&2; exit 1; }

# 300 students: ann's kept grade 300 times, regraded (nothing runs), one page for all of them.
mkdir "$tmp/big"
for i in $(seq -w 1 300); do cp -r "$tmp/reports/ann" "$tmp/big/s$i"; done
"$grade" --regrade "$tmp/big" -o "$tmp/big.csv" 2>/dev/null
size=$(stat -c %s "$tmp/big/index.html")
[ "$size" -lt 1000000 ] || { echo "class page: 300 students make a page of $size bytes" >&2; exit 1; }
browser "file://$tmp/big/index.html#sort=1" --dump-dom >"$tmp/big.dom" 2>"$tmp/big.log"
quiet "$tmp/big.log"
[ "$(grep -o 'report.html' "$tmp/big.dom" | wc -l)" -eq 300 ] || { echo "class page: not 300 links" >&2; exit 1; }
browser "file://$tmp/big/index.html" --screenshot="$shots/class-page-300.png" >/dev/null 2>&1
echo "class page: 4 students checked in Chromium, 300 students in $size bytes"
