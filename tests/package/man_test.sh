#!/bin/bash
# tests/package/man_test.sh PXFER PXFERD SOURCE_DIR: the man pages cannot drift from --help.
# Makes them as the build does (packaging/man.sh) and checks that every subcommand `pxfer --help`
# lists has its pxfer-COMMAND(1), and that each page names exactly the options its --help names
# (an option in a hand-written section that the binary no longer has fails too). Exit 77 = skipped.
set -euo pipefail
pxfer=$1 pxferd=$2 src=$3
command -v help2man > /dev/null || { echo "man_test: SKIP: help2man not found (tools/deps.sh)"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "man_test: FAIL: $*" >&2; exit 1; }
sh "$src/packaging/man.sh" "$(command -v help2man)" "$pxfer" "$pxferd" "$out"

# Long options as a sorted list: in roff they are written \-\-name (or \fB\-\-name\fR).
page_options() { zcat "$1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' | grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }
help_options() { "$@" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }
same_options() {  # PAGE COMMAND...
  local page=$1; shift
  [ -f "$page" ] || fail "no man page $(basename "$page") for '$*'"
  if ! diff <(page_options "$page") <(help_options "$@") > "$out/diff"; then
    fail "$(basename "$page") and '$* --help' name different options (< page only, > --help only): $(tr '\n' ' ' < "$out/diff")"
  fi
}

commands=$("$pxfer" --help | awk 'tolower($0) ~ /^ *subcommands: *$/ {on=1; next} on && NF == 0 {on=0} on {print $1}')
for c in cp ls stat sum mkdir rm mv report doctor sweep put get; do
  grep -qx "$c" <<< "$commands" || fail "'pxfer --help' does not list $c"
done
for c in $commands; do same_options "$out/pxfer-$c.1.gz" "$pxfer" "$c"; done
# pxferd(8) holds `pxferd --help` and, in TOKEN COMMANDS, each `pxferd token C --help`.
pxferd_options() { { "$pxferd" --help; for c in create list revoke; do "$pxferd" token "$c" --help; done; } |
  grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }
if ! diff <(page_options "$out/pxferd.8.gz") <(pxferd_options) > "$out/diff"; then
  fail "pxferd.8.gz and pxferd's --help (with token create|list|revoke --help) name different options (< page only, > --help only): $(tr '\n' ' ' < "$out/diff")"
fi
zcat "$out/pxferd.8.gz" | grep -q 'drain' || fail "pxferd(8) SIGNALS does not describe the drain"
if zcat "$out/pxferd.8.gz" | grep -qi 'transfers in progress are aborted'; then fail "pxferd(8) still says SIGTERM aborts"; fi
# pxfer(1) names its own options and, as references, no others.
same_options "$out/pxfer.1.gz" "$pxfer"
echo "man_test: $(wc -w <<< "$commands") subcommand pages and pxfer(1), pxferd(8) match --help"
