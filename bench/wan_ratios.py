#!/usr/bin/env python3
"""bench/wan_ratios.py: issue 39's ratios from one bench/wan_matrix.sh output.

usage: bench/wan_ratios.py MATRIX.md [--limit 45] [--size 1G] [--link 1000]
(--limit and --size: by default those on the run's command line, else 45 s and 1G)

For each cell: untuned get and put against the best fixed count (-p N) of the same run, against
GridFTP with 8 streams and BDP buffers, against the best peer configuration the run has (GridFTP's
default, GridFTP -p 8 with BDP buffers, xrdcp), and against the emulated link; iperf3 -P 32 where
the run has it (memory to memory: what TCP through the emulator carries); and whether the emulator
kept up (wan0 drops: packets the kernel dropped before the emulator read them). A run cut at the
limit moved less than SIZE in LIMIT seconds, so a ratio against it is a lower bound (">").
"""
import argparse
import re
import sys


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def cells(text):
    """(name, {tool: Mbit/s or None when cut}, [(tool, emulator %, drops a/b)]) per cell."""
    for chunk in re.split(r"^## ", text, flags=re.M)[1:]:
        name = chunk.split("\n")[0].strip()
        tables = re.split(r"\n\n", chunk)
        rates, runs = {}, []
        for table in tables:
            rows = [r for r in table.split("\n") if r.startswith("| ") and not r.startswith("|---")]
            if not rows:
                continue
            head = [h.strip() for h in rows[0].strip("|").split("|")]
            for row in rows[1:]:
                cols = [c.strip() for c in row.strip("|").split("|")]
                if head[:2] == ["tool", "Mbit/s (median)"]:
                    try:
                        rates[cols[0]] = float(cols[1])
                    except ValueError:
                        rates[cols[0]] = None
                elif head[:2] == ["tool", "round"]:
                    runs.append((cols[0], cols[4], cols[5]))
        yield name, rates, runs


def ratio(a, b, floor):
    """a / b; b None (cut): a lower bound against the rate a cut run moved at most."""
    if a is None or a == "absent" or b == "absent":
        return "-"
    if b is None:
        return f">{a / floor:.1f}"
    return f"{a / b:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("matrix")
    ap.add_argument("--limit", type=float, default=45)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--link", type=float, default=1000, help="the emulated link in Mbit/s")
    args = ap.parse_args()
    text = open(args.matrix).read()
    # The run's own --limit and --size when its command line says them (wan_matrix.sh writes both).
    for flag in ("limit", "size"):
        given = re.search(r"--" + flag + r" (\S+)", text.split("\n## ")[0])
        if given and f"--{flag}" not in sys.argv:
            setattr(args, flag, float(given.group(1)) if flag == "limit" else given.group(1))
    floor = parse_size(args.size) * 8 / args.limit / 1e6  # Mbit/s a cut run moved at most
    print("| cell | get | put | best fixed | gridftp-bdp | best peer | iperf3 | get / best fixed | put / best fixed "
          "| get / gridftp-bdp | put / gridftp-bdp | get / best peer | put / best peer | get / link | put / link "
          "| emulator |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, rates, runs in cells(text):
        fixed = {k: v for k, v in rates.items() if re.fullmatch(r"p\d+", k) and v}
        best_tool = max(fixed, key=fixed.get) if fixed else None
        best = fixed.get(best_tool)
        get, put = rates.get("pxfer-get", "absent"), rates.get("pxfer-put", "absent")
        grid = rates.get("gridftp-bdp", "absent")
        # A run that finished moved at least SIZE in LIMIT s, so any cut one was slower: the best
        # peer is the best that finished, and None (a lower bound) only when every one was cut.
        peers = {k: rates[k] for k in ("gridftp", "gridftp-bdp", "xrdcp") if k in rates}
        done_peers = {k: v for k, v in peers.items() if v}
        peer_tool = max(done_peers, key=done_peers.get) if done_peers else None
        peer = done_peers[peer_tool] if peer_tool else (None if peers else "absent")
        path = rates.get("iperf3", "absent")
        dropped = [t for t, _, d in runs if d not in ("0/0", "")]
        busiest = max((int(c) for _, c, _ in runs if c.isdigit()), default=None)
        emulator = ("drops in " + ", ".join(dropped) if dropped else "kept up") + (
            f" (at most {busiest} % of a core)" if busiest is not None else "")
        if not runs:
            emulator = "not recorded"
        show = lambda v: "-" if v == "absent" else "cut" if v is None else f"{v:.0f}"
        best_text = f"{best:.0f} ({best_tool})" if best else "-"
        grid_cells = ["-", "-", "-"] if grid == "absent" else [show(grid), ratio(get, grid, floor), ratio(put, grid, floor)]
        link = lambda v: "-" if v is None or v == "absent" else f"{v / args.link:.2f}"
        peer_text = "-" if peer == "absent" else "cut" if peer is None else f"{peer:.0f} ({peer_tool})"
        print(f"| {name} | {show(get)} | {show(put)} | {best_text} | {grid_cells[0]} | {peer_text} | {show(path)} "
              f"| {ratio(get, best, floor)} | {ratio(put, best, floor)} | {grid_cells[1]} | {grid_cells[2]} "
              f"| {ratio(get, peer, floor)} | {ratio(put, peer, floor)} | {link(get)} | {link(put)} | {emulator} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
