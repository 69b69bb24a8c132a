#!/usr/bin/env python3
"""Rewrites #include lines to the layered layout (issue 38), so that a branch written against the
old one merges in: run it on the tree after the merge.

  tools/dev/layer_includes.py [ROOT]

- "pxfer/NAME.hpp" becomes "pxfer/LAYER/NAME.hpp" for every public header that lives in
  include/pxfer/LAYER/ (the folder is the header's layer);
- "transfer/..." (the engine's internal headers) becomes "engine/...".
Idempotent: an include that already names its layer is left alone. Prints the files it changed.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
public = root / "include" / "pxfer"
layer_of = {}
for header in public.glob("*/*.hpp"):
    layer_of[header.name] = header.parent.name

include = re.compile(r'^(\s*#\s*include\s*[<"])([^">]+)([">])', re.M)


def rewrite(match):
    head, path, tail = match.groups()
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "pxfer" and parts[1] in layer_of:
        path = f"pxfer/{layer_of[parts[1]]}/{parts[1]}"
    elif parts[0] == "transfer" and len(parts) == 2:
        path = "engine/" + parts[1]
    return head + path + tail


changed = 0
for folder in ("src", "include", "tools", "tests", "plugin", "bench", "fuzz"):
    for path in (root / folder).rglob("*"):
        if path.suffix not in (".cpp", ".hpp", ".h", ".cc") or not path.is_file():
            continue
        text = path.read_text(errors="surrogateescape")
        new = include.sub(rewrite, text)
        if new != text:
            path.write_text(new, errors="surrogateescape")
            changed += 1
            print(path.relative_to(root))
print(f"layer_includes: {changed} file(s) changed", file=sys.stderr)
