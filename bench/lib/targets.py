#!/usr/bin/env python3
"""Issue #6's targets, judged from the outputs bench/all.sh keeps: targets.py RESULTS_DIR.

Reads RESULTS_DIR/<case>.txt as the bench scripts print them and prints a Markdown table: each
target, what was measured, and whether it is met. A case that did not run (or whose output
cannot be read) is reported as not measured, never as met.
"""
import os
import re
import sys


def read(results, case):
    path = os.path.join(results, case + ".txt")
    return open(path, encoding="utf-8", errors="replace").read() if os.path.exists(path) else None


def number(text):
    return float(text.replace(",", ""))


def stdio_rows(text):
    """(size in bytes, direction) -> (relay msg/s, relay MB/s, relay / pipe) from stdio-throughput's table."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0].endswith(" B") and cells[2] in ("c->s", "s->c", "both"):
            rows[(int(number(cells[0][:-2])), cells[2])] = (number(cells[3]), number(cells[4]), number(cells[8]))
    return rows


def stdio_rate(text, size, column, target, unit):
    rows = stdio_rows(text)
    one_way = [rows[(size, d)] for d in ("c->s", "s->c") if (size, d) in rows]
    if not one_way:
        return None
    worst = min(r[column] for r in one_way)
    pipe = min(r[2] for r in one_way)
    shown = f"{worst:,.0f}" if unit == "msg/s" else f"{worst:,.1f}"
    return (f"{shown} {unit} one way, the slower direction (relay rate; {pipe:.2f} of a plain pipe)",
            worst >= target)


def startup(text):
    added, server = {}, None
    for line in text.splitlines():
        m = re.match(r"== ([^:]+):", line)
        if m:
            server = m.group(1)
        m = re.match(r"through mcp-chaos\s+\d+\s.*\s\+(-?\d+) ms\s*$", line)
        if m and server:
            added[server] = int(m.group(1))
    if not added:
        return None
    return ("; ".join(f"+{ms} ms median in front of {s}" for s, ms in added.items()),
            all(ms < 500 for ms in added.values()))


def http_throughput(text):
    m = re.search(r"mcp-chaos/nginx-proxy: ([\d.]+)", text)
    if not m:
        return None
    cpu = dict(re.findall(r"^(mcp-chaos|nginx-proxy)\s.*?([\d.]+) us CPU/request", text, re.M))
    detail = f" ({cpu['mcp-chaos']} vs {cpu['nginx-proxy']} µs CPU per request)" if len(cpu) == 2 else ""
    metrics = re.search(r"mcp-chaos\+metrics/nginx-proxy: ([\d.]+)", text)
    if metrics:
        detail += f"; {float(metrics.group(1)):.2f} with metrics on (the CLI's default)"
    ratio = float(m.group(1))
    return f"{ratio:.2f} of nginx's requests/s{detail}", ratio >= 1.0


def http_latency(text, rate=5000):
    p99 = {}
    for line in text.splitlines():
        cells = line.split()
        if len(cells) >= 5 and cells[0] in ("direct", "mcp-chaos", "nginx", "haproxy") and cells[1] == str(rate):
            p99[cells[0]] = float(cells[4])
    if "direct" not in p99 or "mcp-chaos" not in p99:
        return None
    added = {k: v - p99["direct"] for k, v in p99.items() if k != "direct"}
    others = ", ".join(f"{k} {v:+.2f}" for k, v in added.items() if k != "mcp-chaos")
    return (f"p99 {added['mcp-chaos']:+.2f} ms over direct ({p99['direct']:.2f} ms)"
            + (f"; {others} ms" if others else ""), added["mcp-chaos"] < 1.0)


def sse_stream(text):
    ratios = {}
    for line in text.splitlines():
        cells = line.split()
        if len(cells) >= 5 and cells[0].isdigit() and cells[1] in ("mcp-chaos", "mcp-chaos+metrics", "nginx-proxy"):
            ratios[(int(cells[0]), cells[1])] = float(cells[4])
    if not any(t == "mcp-chaos" for _, t in ratios):
        return None
    parts, met = [], True
    for size in sorted({s for s, _ in ratios}):
        label = f"{size // 1024} KiB" if size >= 1024 else f"{size} B"
        parts.append(f"{label}: " + ", ".join(f"{t} {ratios[(size, t)]:.2f}"
                                             for t in ("mcp-chaos", "mcp-chaos+metrics", "nginx-proxy")
                                             if (size, t) in ratios))
        met &= ratios.get((size, "mcp-chaos"), 0) >= 0.8 and ratios.get((size, "mcp-chaos+metrics"), 1) >= 0.8
    return "ratio to direct events/s, " + "; ".join(parts), met


def sse_held(text):
    m = re.search(r"holding (\d+) streams\s+RSS\s+(\d+) MiB\s+heap used after GC\s+(\d+) MiB", text)
    if not m:
        return None
    streams, rss, heap = (int(g) for g in m.groups())
    reach = re.search(r"message reached (\d+) of (\d+) held streams in (\d+) ms", text)
    reached = f"; a message reached {reach.group(1)} of {reach.group(2)} in {reach.group(3)} ms" if reach else \
        "; no message was sent to them"
    fd_limited = "note: open files limited" in text
    limited = "" if streams >= 10_000 else " (the open-files limit allows no more)" if fd_limited \
        else " (fewer than 10,000 asked: SESSIONS)"
    ok = (streams >= 10_000 or fd_limited) and rss < 1024 and reach is not None and reach.group(1) == reach.group(2)
    return f"{streams:,} streams{limited} in {rss} MiB RSS, {heap} MiB heap{reached}", ok


def main():
    results = sys.argv[1]
    text = {c: read(results, c) for c in
            ("stdio-throughput", "stdio-startup", "http-throughput", "http-latency", "sse-stream", "sse-held")}
    targets = [
        ("stdio: 1,000,000 msg/s at 100 B", "stdio-throughput",
         lambda t: stdio_rate(t, 100, 0, 1_000_000, "msg/s")),
        ("stdio: 400 MB/s at 1 KiB", "stdio-throughput", lambda t: stdio_rate(t, 1024, 1, 400, "MB/s")),
        ("stdio start-up: < 0.5 s on top of the server's", "stdio-startup", startup),
        ("HTTP: requests/s at least nginx's", "http-throughput", http_throughput),
        ("HTTP: p99 added at 5k req/s < 1 ms", "http-latency", http_latency),
        ("SSE: at least 80% of direct events/s", "sse-stream", sse_stream),
        ("10,000 held SSE streams in < 1 GiB RSS", "sse-held", sse_held),
    ]
    print("| target | measured | met? |")
    print("|---|---|---|")
    for name, case, judge in targets:
        verdict = judge(text[case]) if text[case] else None
        if verdict is None:
            print(f"| {name} | not measured (no readable output of bench/{case}.sh) | — |")
        else:
            print(f"| {name} | {verdict[0]} | {'yes' if verdict[1] else 'no'} |")


if __name__ == "__main__":
    main()
