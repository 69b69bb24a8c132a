#!/usr/bin/env python3
"""The layering rules of src/ (issue 10), checked on every build so that they cannot drift:

- the pure library pxfer_core (its sources as src/CMakeLists.txt lists them) includes no Asio, no
  socket or file layer (src/net, src/io), no engine, server or client header, and none of the
  public headers that declare I/O;
- the I/O layers (src/io, src/net) include nothing from the engine, the server or the client;
- the engine (src/transfer) includes nothing from the server or the client;
- the server and the client do not include each other;
- the public headers (include/pxfer) include no internal header (src/);
- no file in src/ or include/ is over 500 lines, and no function in src/, include/ or tools/ is
  over 80 lines (found by a signature line ending in '{' and its matching '}').

Usage: layers_test.py SOURCE_DIR. Prints one line per violation; exit 1 when there is any.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
src = root / "src"

# Public headers whose declarations do I/O (sockets, files, processes): the pure layers stay off them.
IO_HEADERS = {"net/host_settings.hpp", "pxfer/client.hpp", "pxfer/batch.hpp", "pxfer/server.hpp",
              "io/file_io.hpp", "pxfer/socket_tuning.hpp", "pxfer/metrics_endpoint.hpp",
              "client/remote_tree.hpp", "pxfer/sweep.hpp"}
HIGHER = {
    "core": ("net/", "io/", "transfer/", "server/", "client/"),
    "io": ("transfer/", "server/", "client/"),
    "transfer": ("server/", "client/"),
    "server": ("client/",),
    "client": ("server/",),
}


SIGNATURE = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>, ]+)?\s*\{\s*$")
CONTROL = re.compile(r"(if|for|while|switch|catch|else|do)\b")


def long_functions(path, limit=80):
    """(line, length) of each function body over `limit` lines: a line that ends a signature with
    '{' (not a control statement, a lambda or an initializer) up to the '}' that closes it."""
    lines = path.read_text(errors="replace").split("\n")
    found, i = [], 0
    while i < len(lines):
        s = lines[i].strip()
        if SIGNATURE.search(s) and not CONTROL.match(s) and not s.startswith("}") and "=" not in s.split("(")[0] \
                and not re.match(r".*\[.*\]\s*\(", s):
            depth, j = 0, i
            while j < len(lines):
                t = re.sub(r'"(\\.|[^"\\])*"', '""', lines[j])
                t = re.sub(r"'(\\.|[^'\\])'", "''", t).split("//")[0]
                depth += t.count("{") - t.count("}")
                if depth <= 0 and j > i:
                    break
                j += 1
            if j - i + 1 > limit:
                found.append((i + 1, j - i + 1))
                i = j
        i += 1
    return found


cmake = (src / "CMakeLists.txt").read_text()
match = re.search(r"add_library\(pxfer_core STATIC(.*?)\)", cmake, re.S)
core = {src / name for name in match.group(1).split() if name.endswith(".cpp")} if match else set()

problems = []
include = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def public_closure(names):
    """The include/pxfer headers reached from `names`, following their own includes."""
    seen, todo = set(), [n for n in names if n.startswith("pxfer/")]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        header = root / "include" / name
        if header.exists():
            todo += [n for _, n in include.findall(header.read_text(errors="replace")) if n.startswith("pxfer/")]
    return seen


def layer_of(path):
    if path in core:
        return "core"
    part = path.relative_to(src).parts[0]
    return {"io": "io", "net": "io", "transfer": "transfer", "server": "server", "client": "client"}.get(part)


for path in sorted(src.rglob("*")):
    if path.suffix not in (".cpp", ".hpp"):
        continue
    text = path.read_text(errors="replace")
    lines = text.count("\n")
    if lines > 500:
        problems.append(f"{path.relative_to(root)}: {lines} lines (over 500): split it by responsibility")
    layer = layer_of(path)
    if layer is None:
        continue
    local_dir = path.parent.relative_to(src).as_posix() + "/"
    if layer == "core":
        for name in sorted(public_closure([n for _, n in include.findall(text)]) & IO_HEADERS):
            problems.append(f"{path.relative_to(root)}: the pure core reaches {name} through its includes")
    for quote, name in include.findall(text):
        # A quoted include of a sibling ("connect.hpp") is resolved against its own folder.
        resolved = local_dir + name if quote == '"' and "/" not in name else name
        if layer == "core" and (name.startswith("boost/asio") or name in IO_HEADERS):
            problems.append(f"{path.relative_to(root)}: the pure core includes {name}")
        for higher in HIGHER[layer]:
            # A file's own folder is its own layer (a core file in transfer/ includes its header).
            if resolved.startswith(higher) and local_dir != higher:
                problems.append(f"{path.relative_to(root)} ({layer}) includes {name} from a higher layer")
for path in sorted((root / "include").rglob("*.hpp")):
    text = path.read_text(errors="replace")
    lines = text.count("\n")
    # The public headers are what a program using the library needs: they stand on their own and
    # never reach into src/ (internals live beside their sources).
    for quote, name in include.findall(text):
        if quote == '"' and not name.startswith("pxfer/"):
            problems.append(f"{path.relative_to(root)}: a public header includes the internal {name}")
    if lines > 500:
        problems.append(f"{path.relative_to(root)}: {lines} lines (over 500): split it by responsibility")

for folder in ("src", "include", "tools"):
    for path in sorted((root / folder).rglob("*")):
        if path.suffix in (".cpp", ".hpp"):
            for line, length in long_functions(path):
                problems.append(f"{path.relative_to(root)}:{line}: a function of {length} lines (over 80): split it")

if not core:
    problems.append("src/CMakeLists.txt: no pxfer_core source list found")
for p in problems:
    print(p)
print(f"layers: {len(core)} core sources checked; {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
