#!/bin/sh
# packaging/man.sh HELP2MAN PXFER PXFERD OUTDIR: pxfer.1.gz and pxferd.8.gz from the binaries'
# --help and --version. pxfer(1) also carries each command's --help.
set -eu
help2man=$1 pxfer=$2 pxferd=$3 out=$4
extra=$out/pxfer.h2m
{
  echo "[COMMANDS]"
  for c in put get doctor sweep; do
    echo ".SS pxfer $c"
    echo ".nf"
    "$pxfer" $c --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    echo ".fi"
  done
  echo "[FILES]"
  echo ".TP"
  echo "~/.config/pxfer/known_hosts"
  echo "pinned server certificates (HOST:PORT sha256:HEX)"
  echo "[SEE ALSO]"
  echo "pxferd(8); /usr/share/doc/pxfer/README.md, /usr/share/doc/pxfer/guide.md"
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
SIGTERM and SIGINT stop the server (transfers in progress are aborted, partial puts kept for a
resume). SIGHUP re\-reads the tokens and access files (systemctl reload pxferd).
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
