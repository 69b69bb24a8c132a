#!/usr/bin/env python3
"""The layering of src/ (issues 10 and 38), checked on every test run.

The compiler enforces the include rule: each layer is a static library of whole folders
(src/CMakeLists.txt, pxfer_layer), defines PXFER_LAYER_<NAME> for itself and what links it, and
every header of a layer includes pxfer/<layer>/layer.hpp, which fails the build without that macro.
This script checks what the compiler cannot:

- the target graph: each layer links only the layers below it (RULE); the server and the client
  stay beside each other, third-party copy (tpc) sits above both;
- every folder of src/ belongs to exactly one layer, every public header sits in
  include/pxfer/<layer>/, and every header includes its own layer's guard and no other;
- the public headers include no internal header (src/); the pure layers (common, core) include no
  Asio and no socket header;
- tests/unit/<layer>/ holds the unit tests of that layer: each uses only its layer and those below;
- no file in src/ or include/ is over 500 lines, and no function in src/, include/, tools/, wanem/ or plugin/ is
  over 80 lines (found by a signature line ending in '{' and its matching '}').

Usage: layers_test.py SOURCE_DIR. Prints one line per violation; exit 1 when there is any.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
src = root / "src"
public = root / "include" / "pxfer"

# Bottom up; each layer may link (and so include) exactly these.
RULE = {
    "common": set(),
    "core": {"common"},
    "io": {"common", "core"},
    "engine": {"common", "core", "io"},
    "present": {"common", "core", "io", "engine"},
    "client": {"common", "core", "io", "engine", "present"},
    "server": {"common", "core", "io", "engine", "present"},
    "tpc": {"common", "core", "io", "engine", "present", "client", "server"},
}
PURE = {"common", "core"}
PURE_FORBIDDEN = re.compile(r"^(boost/asio|sys/socket\.h|netinet/|arpa/inet\.h|openssl/ssl\.h)")


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
problems = []
include = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)

# The layers as CMake builds them: pxfer_layer(NAME FOLDERS ... LINKS ... [PRIVATE_LINKS ...]).
folders_of, links_of = {}, {}
for name, body in re.findall(r"^pxfer_layer\((\w+)(.*?)\)\s*$", cmake, re.S | re.M):
    words = body.split()
    section, found = None, {"FOLDERS": [], "LINKS": [], "PRIVATE_LINKS": []}
    for w in words:
        if w in found:
            section = w
        elif section:
            found[section].append(w)
    folders_of[name] = found["FOLDERS"]
    links_of[name] = {l.removeprefix("pxfer_") for l in found["LINKS"] + found["PRIVATE_LINKS"] if l.startswith("pxfer_")}
if set(folders_of) != set(RULE):
    problems.append(f"src/CMakeLists.txt: layers {sorted(folders_of)}, but the rule knows {sorted(RULE)}")


def below(layer):
    """Every layer `layer` reaches through the libraries it links."""
    seen, todo = set(), [layer]
    while todo:
        for l in links_of.get(todo.pop(), set()) & set(RULE):
            if l not in seen:
                seen.add(l)
                todo.append(l)
    return seen


for layer in folders_of:
    for other in sorted(below(layer) - RULE.get(layer, set()) - {"version", "warnings"}):
        problems.append(f"src/CMakeLists.txt: pxfer_{layer} reaches pxfer_{other}: layers link only downward")

layer_of_folder = {}
for layer, folders in folders_of.items():
    for f in folders:
        if f in layer_of_folder:
            problems.append(f"src/{f}: in two layers ({layer_of_folder[f]} and {layer})")
        layer_of_folder[f] = layer
for d in sorted(p for p in src.iterdir() if p.is_dir()):
    if d.name not in layer_of_folder:
        problems.append(f"src/{d.name}: in no layer: add it to a pxfer_layer(... FOLDERS ...) of src/CMakeLists.txt")
for p in sorted(public.glob("*.hpp")):
    problems.append(f"include/pxfer/{p.name}: a public header outside a layer's folder: move it to include/pxfer/<layer>/")

guard = re.compile(r'^#include "pxfer/(\w+)/layer\.hpp"', re.M)


def layer_of(path):
    if path.is_relative_to(public):
        return path.relative_to(public).parts[0]
    return layer_of_folder.get(path.relative_to(src).parts[0])


files = sorted(p for p in list(src.rglob("*")) + list(public.rglob("*")) if p.suffix in (".cpp", ".hpp"))
for path in files:
    text = path.read_text(errors="replace")
    name = path.relative_to(root).as_posix()
    lines = text.count("\n")
    if lines > 500:
        problems.append(f"{name}: {lines} lines (over 500): split it by responsibility")
    layer = layer_of(path)
    if layer is None or path.name == "layer.hpp":
        continue
    if path.suffix == ".hpp":
        guards = guard.findall(text)
        if guards != [layer]:
            problems.append(f'{name}: a header of the {layer} layer includes {guards or "no guard"}: it must include "pxfer/{layer}/layer.hpp" (and no other)')
    for quote, target in include.findall(text):
        if path.is_relative_to(public) and quote == '"' and not target.startswith("pxfer/"):
            problems.append(f"{name}: a public header includes the internal {target}")
        if layer in PURE and PURE_FORBIDDEN.match(target):
            problems.append(f"{name}: the pure core ({layer}) includes {target}")

# tests/unit/<layer>/ mirrors the layers: a unit test uses only its own layer and those below it
# (the test program links everything, so this is checked here rather than by the compiler).
for path in sorted((root / "tests" / "unit").glob("*/*.cpp")):
    layer = path.parent.name
    if layer not in RULE:
        problems.append(f"{path.relative_to(root)}: tests/unit/{layer}/ is not a layer ({', '.join(RULE)})")
        continue
    for quote, target in include.findall(path.read_text(errors="replace")):
        parts = target.split("/")
        used = parts[1] if parts[0] == "pxfer" and len(parts) == 3 else layer_of_folder.get(parts[0]) if len(parts) > 1 else None
        if used in RULE and used != layer and used not in RULE[layer]:
            problems.append(f"{path.relative_to(root)} uses {target} ({used}): move the test to tests/unit/{used}/")

for folder in ("src", "include", "tools", "wanem", "plugin"):
    for path in sorted((root / folder).rglob("*")):
        if path.suffix in (".cpp", ".hpp"):
            for line, length in long_functions(path):
                problems.append(f"{path.relative_to(root)}:{line}: a function of {length} lines (over 80): split it")

for p in problems:
    print(p)
print(f"layers: {len(folders_of)} layers, {len(layer_of_folder)} folders, {len(files)} files checked; {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
