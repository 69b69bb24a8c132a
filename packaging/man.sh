#!/bin/sh
# packaging/man.sh HELP2MAN PXFER PXFERD OUTDIR: the man pages, all from the binaries' --help and
# --version (help2man), so they cannot drift: pxfer.1.gz, one pxfer-COMMAND.1.gz per subcommand
# that `pxfer --help` lists (pxfer-cp(1), pxfer-ls(1), ...), and pxferd.8.gz.
# tests/package/man_test.sh checks that every subcommand has its page and that the pages' options
# are the ones --help shows.
set -eu
help2man=$1 pxfer=$2 pxferd=$3 out=$4
mkdir -p "$out/wrap"
# "Subcommands:" in CLI11's --help: a name and its one-line description per line, up to a blank line.
commands=$("$pxfer" --help | awk 'tolower($0) ~ /^ *subcommands: *$/ {on=1; next} on && NF == 0 {on=0} on {print $1}')
[ -n "$commands" ] || { echo "man.sh: no subcommands in '$pxfer --help'" >&2; exit 1; }
version=$("$pxfer" --version)
for c in $commands; do
  what=$("$pxfer" --help | awk -v c="$c" 'tolower($0) ~ /^ *subcommands: *$/ {on=1; next} on && $1 == c {$1=""; sub(/^ +/, ""); print; exit}')
  # help2man runs PROGRAM --help: this PROGRAM is `pxfer COMMAND`.
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$pxfer" "$c" > "$out/wrap/pxfer-$c"
  chmod +x "$out/wrap/pxfer-$c"
  printf '[SEE ALSO]\npxfer(1), pxferd(8); /usr/share/doc/pxfer/README.md\n' > "$out/wrap/pxfer-$c.h2m"
  "$help2man" --no-info --section=1 --name="$what" --version-string="$version" --include="$out/wrap/pxfer-$c.h2m" \
    "$out/wrap/pxfer-$c" | gzip -9n > "$out/pxfer-$c.1.gz"
done
extra=$out/pxfer.h2m
{
  echo "[COMMANDS]"
  for c in $commands; do
    echo ".TP"
    echo ".B pxfer $c"
    echo "see pxfer\\-$c(1)"
  done
  echo "[FILES]"
  echo ".TP"
  echo "~/.config/pxfer/known_hosts"
  echo "pinned server certificates (HOST:PORT sha256:HEX)"
  echo "[SEE ALSO]"
  printf 'pxferd(8)'
  for c in $commands; do printf ', pxfer\\-%s(1)' "$c"; done
  echo "; /usr/share/doc/pxfer/README.md, /usr/share/doc/pxfer/guide.md"
} > "$extra"
"$help2man" --no-info --section=1 --name="parallel-stream file transfer client" --include="$extra" "$pxfer" \
  | gzip -9n > "$out/pxfer.1.gz"
cat > "$out/pxferd.h2m" <<'H2M'
[FILES]
.TP
/etc/pxferd/pxferd.toml
options (\-\-config); keys are the long options without \-\-
.TP
/etc/pxferd/tokens
client identities (pxferd token create); re\-read on SIGHUP
.TP
/var/lib/pxferd
state directory: the self\-signed certificate and key
[SIGNALS]
.TP
SIGTERM, SIGINT (systemctl stop pxferd)
drain: new transfers are refused at once (the client hears "the server is shutting down"), the
running ones may finish for up to \-\-drain\-timeout (default 30 s); what is still running then is
aborted, its client told so. A put's partial file and journal are kept hidden, so the same command
resumes it. A second SIGTERM, or \-\-drain\-timeout 0, aborts at once. pxferd exits 0 once nothing runs.
.TP
SIGHUP (systemctl reload pxferd)
re\-reads the tokens and access files and the certificate; a bad file leaves the old settings in force.
[SEE ALSO]
pxfer(1); /usr/share/doc/pxfer/operations.md, /usr/share/doc/pxfer/security.md
H2M
# The token subcommands' own --help, and the logrotate snippet (issue 37: token management, --log-file).
{
  echo "[TOKEN COMMANDS]"
  for c in create list revoke; do
    echo ".SS pxferd token $c"
    echo ".nf"
    "$pxferd" token $c --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    echo ".fi"
  done
  echo "[FILES]"
  echo ".TP"
  echo "/etc/logrotate.d/pxferd"
  echo "rotates /var/log/pxferd/*.log (\\-\\-log\\-file) and sends SIGUSR1, which reopens the file"
} >> "$out/pxferd.h2m"
"$help2man" --no-info --section=8 --name="pxfer file transfer server" --include="$out/pxferd.h2m" "$pxferd" \
  | gzip -9n > "$out/pxferd.8.gz"
