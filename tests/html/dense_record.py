#!/usr/bin/env python3
"""A ten-minute record of 10,000 requests: a real lab run (RECORD), then one request every 60 ms
repeating its last entry, as /count, or as a /always500 on every FAIL_EVERY-th (0: never).
Used by the HTML report's test and by bench/run-html-bench.
    dense_record.py RECORD OUT [FAIL_EVERY]"""
import copy, datetime, json, sys

source, out = sys.argv[1], sys.argv[2]
fail_every = int(sys.argv[3]) if len(sys.argv) > 3 else 0
r = json.load(open(source))
last = r["entries"][-1]
w0 = datetime.datetime.strptime(last["wall"], "%Y-%m-%dT%H:%M:%S.%fZ")
while len(r["entries"]) < 10000:
    i = len(r["entries"])
    e = copy.deepcopy(last)
    bad = fail_every > 0 and i % fail_every == 0
    e.update(seq=i + 1, path="/always500" if bad else "/count", status=500 if bad else 200, counted=bad,
             t_ms=last["t_ms"] + 60 * i, wall=(w0 + datetime.timedelta(milliseconds=60 * i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    r["entries"].append(e)
r["count"] = len(r["entries"])
json.dump(r, open(out, "w"))
