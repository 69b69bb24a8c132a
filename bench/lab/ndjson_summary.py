#!/usr/bin/env python3
"""Figures of one `pxfer ... --json` run (NDJSON, docs in src/report/json_printer.cpp).

  ndjson_summary.py FILE [--warmup SECONDS]
      prints one line of space-separated fields:
        state avg_MBps steady_MBps seconds busy streams retransmits max_sndbuf error
      state       done (a summary event), cut (stopped by the time limit: no summary) or error
      avg_MBps    bytes / seconds over the whole run (1 MB = 10^6 bytes, as pxfer prints)
      steady_MBps bytes moved after WARMUP seconds / time after WARMUP (slow start excluded);
                  "-" when fewer than 2 s remain after WARMUP
      busy        streams with Send-Q > 0 in at least half the intervals (pxfer's own rule and,
                  for a summary, pxfer's own figure); "-" without --stream-stats
      retransmits sum over streams (last figures), "-" without --stream-stats
      max_sndbuf  largest sending-side SO_SNDBUF in the last interval, bytes ("-" if unknown)
      error       the error event's message with spaces as underscores, or "-"
  ndjson_summary.py FILE --excerpt-at SECONDS
      prints the interval nearest SECONDS in pxfer's text layout (rate line + one line per stream).

Why the steady rate: in a time-bounded put, "bytes" counts what the sender handed to its
sockets, including data still queued in them; the difference between two points in steady
state cancels that, and it also leaves out slow start, which at 0.01 % loss dominates a short
single-stream run.
"""
import json
import sys


def load(path):
    events = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass  # a line cut by the interrupt
    return events


def size(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return "%.1f %s" % (n / div, unit)
    return "%d B" % n


def busy_from_intervals(intervals):
    counts, queued = {}, {}
    for ev in intervals:
        for s in ev.get("streams", []):
            counts[s["stream"]] = counts.get(s["stream"], 0) + 1
            if s.get("send_q", 0) > 0:
                queued[s["stream"]] = queued.get(s["stream"], 0) + 1
    if not counts:
        return None, None
    busy = sum(1 for k, n in counts.items() if 2 * queued.get(k, 0) >= n)
    return busy, len(counts)


def summary(events, warmup):
    intervals = [e for e in events if e.get("event") == "interval"]
    summ = next((e for e in reversed(events) if e.get("event") == "summary"), None)
    err = next((e for e in events if e.get("event") == "error"), None)
    # A run stopped by the time limit (timeout -s INT) ends with pxfer's own "interrupted by
    # SIGINT" error event since pxfer cleans up on signals: that is a cut, not a failure.
    if err is not None and "interrupted by SIGINT" in err.get("message", ""):
        err = None
    state = "done" if summ else ("error" if err else "cut")
    if summ:
        end = (summ["bytes"], summ["seconds"])
    elif intervals:
        end = (intervals[-1]["bytes"], intervals[-1]["seconds"])
    else:
        end = (0, 0.0)
    avg = end[0] / end[1] / 1e6 if end[1] > 0 else 0.0
    steady = "-"
    start = next((e for e in intervals if e["seconds"] >= warmup), None)
    if start and end[1] - start["seconds"] >= 2.0:
        steady = "%.2f" % ((end[0] - start["bytes"]) / (end[1] - start["seconds"]) / 1e6)
    if summ and "busy_streams" in summ:
        busy, streams = summ["busy_streams"], len(summ["stream_totals"])
    else:
        busy, streams = busy_from_intervals(intervals)
    with_streams = [e for e in intervals if e.get("streams")]
    retrans = sndbuf = "-"
    if summ and summ.get("stream_totals"):
        retrans = str(sum(t["retransmits"] for t in summ["stream_totals"]))
    elif with_streams:
        retrans = str(sum(s["retransmits"] for s in with_streams[-1]["streams"]))
    if with_streams:
        sndbuf = str(max(s["sndbuf"] for s in with_streams[-1]["streams"]))
    if streams is None and summ:
        streams = summ.get("streams")
    message = "-"
    if err:
        message = err.get("message", "error").replace(" ", "_") or "error"
    return " ".join(str(x) for x in (
        state, "%.2f" % avg, steady, "%.1f" % end[1],
        "-" if busy is None else busy, "-" if streams is None else streams,
        retrans, sndbuf, message))


def excerpt(events, at):
    intervals = [e for e in events if e.get("event") == "interval" and e.get("streams")]
    if not intervals:
        return "(no per-stream intervals)"
    ev = min(intervals, key=lambda e: abs(e["seconds"] - at))
    out = ["%12d bytes %9.2f KB/sec avg %9.2f KB/sec inst   (t = %.0f s)" % (
        ev["bytes"], ev["avg_Bps"] / 1024, ev["inst_Bps"] / 1024, ev["seconds"])]
    for s in ev["streams"]:
        out.append("  stream %2d %12d bytes %9.2f MB/s  cwnd %5d  rtt %8.2f ms  retrans %5d  send-q %10s  sndbuf %10s" % (
            s["stream"], s["bytes"], s["inst_Bps"] / 1e6, s["cwnd"], s["rtt_us"] / 1000.0,
            s["retransmits"], size(s["send_q"]), size(s["sndbuf"])))
    return "\n".join(out)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    events = load(argv[1])
    if len(argv) >= 4 and argv[2] == "--excerpt-at":
        print(excerpt(events, float(argv[3])))
        return
    warmup = float(argv[3]) if len(argv) >= 4 and argv[2] == "--warmup" else 0.0
    print(summary(events, warmup))


if __name__ == "__main__":
    main(sys.argv)
