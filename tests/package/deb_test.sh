#!/usr/bin/env bash
# tests/package/deb_test.sh BUILD_DIR: builds the Debian package with cpack in BUILD_DIR and checks
# it without installing it: name, control fields and dependencies, maintainer scripts, the files
# and their modes (dpkg-deb -c), then unpacks it (dpkg -x) into a scratch root and runs what it
# holds: both binaries, the default config through --check-config, the man pages, and the unit
# through systemd-analyze verify; lintian must report no error and no warning, and hardening-check
# must pass for both binaries. Exit 77 (ctest: skipped) with the reason when a tool is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
skip() { echo "deb_test: SKIPPED: $*"; exit 77; }
fail() { echo "deb_test: FAILED: $*" >&2; exit 1; }
for tool in cpack dpkg-deb dpkg-shlibdeps; do
  command -v $tool >/dev/null || skip "$tool not found (apt-get install dpkg-dev cmake, or tools/deps.sh)"
done

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[ "$prefix" = /usr ] || skip "$build is configured with CMAKE_INSTALL_PREFIX=$prefix (a build directory older than the packaging); reconfigure it with -DCMAKE_INSTALL_PREFIX=/usr"

scratch=$(mktemp -d /tmp/pxfer-deb-test-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cd "$build"
rm -f pxfer_*.deb
cpack -G DEB > "$scratch/cpack.log" 2>&1 || { cat "$scratch/cpack.log"; fail "cpack -G DEB failed"; }
version=$("$build/bin/pxfer" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
deb="$build/pxfer_${version}_${arch}.deb"
[ -f "$deb" ] || fail "expected $deb; cpack made: $(ls pxfer_*.deb 2>/dev/null)"
echo "deb_test: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

# Control fields: the name, the version of the binaries, dependencies found by dpkg-shlibdeps.
[ "$(dpkg-deb -f "$deb" Package)" = pxfer ] || fail "Package is not pxfer"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version $(dpkg-deb -f "$deb" Version) is not $version"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in adduser libc6 libstdc++6 libssl3 libsystemd0; do
  echo "$depends" | grep -q "$lib" || fail "Depends lacks $lib (dpkg-shlibdeps): $depends"
done
dpkg-deb -e "$deb" "$scratch/control"
grep -qx /etc/pxferd/pxferd.toml "$scratch/control/conffiles" || fail "pxferd.toml is not a conffile"
grep -qx /etc/logrotate.d/pxferd "$scratch/control/conffiles" || fail "the logrotate snippet is not a conffile"
grep -q 'deb-systemd-invoke stop' "$scratch/control/prerm" || fail "prerm does not stop pxferd with deb-systemd-invoke"
for script in postinst prerm postrm; do
  [ -x "$scratch/control/$script" ] || fail "$script missing or not executable"
  sh -n "$scratch/control/$script" || fail "$script: syntax error"
done
grep -q systemd-sysusers "$scratch/control/postinst" || fail "postinst does not create the pxferd user"

# Files and modes, as dpkg-deb lists them ("MODE OWNER SIZE DATE TIME PATH").
dpkg-deb -c "$deb" | awk '{print $1, $2, $6}' > "$scratch/contents"
expect() {  # MODE PATH
  grep -qx -- "$1 root/root $2" "$scratch/contents" || fail "expected $1 root/root $2; the package has: $(grep -F -- "$2" "$scratch/contents" || echo nothing)"
}
expect -rwxr-xr-x ./usr/bin/pxfer
expect -rwxr-xr-x ./usr/sbin/pxferd
expect -rw-r--r-- ./usr/lib/systemd/system/pxferd.service
expect -rw-r--r-- ./usr/lib/sysusers.d/pxferd.conf
expect drwxr-x--- ./etc/pxferd/
expect -rw-r----- ./etc/pxferd/pxferd.toml
expect -rw-r--r-- ./usr/share/man/man1/pxfer.1.gz
expect -rw-r--r-- ./usr/share/man/man8/pxferd.8.gz
expect -rw-r--r-- ./usr/share/bash-completion/completions/pxfer
expect -rw-r--r-- ./usr/share/bash-completion/completions/pxferd
expect -rw-r--r-- ./usr/share/zsh/vendor-completions/_pxfer
expect -rw-r--r-- ./usr/share/doc/pxfer/operations.md
expect -rw-r--r-- ./usr/share/doc/pxfer/copyright
expect -rw-r--r-- ./usr/share/doc/pxfer/changelog.gz
expect -rw-r--r-- ./etc/logrotate.d/pxferd

# Debian policy as a site's repository checks it: no lintian error or warning (the two overrides
# in packaging/debian/lintian-overrides say why), and Debian's hardening flags in both binaries.
for tool in lintian hardening-check; do
  command -v $tool >/dev/null || fail "$tool is missing (tools/deps.sh installs lintian and devscripts)"
done
lintian --fail-on error,warning "$deb" > "$scratch/lintian.log" 2>&1 ||
  fail "lintian: $(grep -E '^[EW]:' "$scratch/lintian.log" | tr '\n' ';' || cat "$scratch/lintian.log")"
echo "deb_test: lintian clean ($(grep -c '^[IP]:' "$scratch/lintian.log" || true) info/pedantic notes)"

# Unpacked: the binaries run, the shipped config is valid, the man pages say what --help says.
root="$scratch/root"
dpkg -x "$deb" "$root"
"$root/usr/bin/pxfer" --version | grep -q "^pxfer $version " || fail "pxfer --version"
"$root/usr/sbin/pxferd" --version | grep -q "^pxferd $version " || fail "pxferd --version"
for binary in "$root/usr/bin/pxfer" "$root/usr/sbin/pxferd"; do
  # --nocfprotection: the CET note needs every object CET-marked, Debian 12's own startup files
  # included, and they are not (a one-line C++ program built with -fcf-protection fails it too).
  hardening-check --quiet --nocfprotection "$binary" > "$scratch/hardening.log" 2>&1 ||
    fail "hardening-check $(basename "$binary") (configure with -DPXFER_HARDENING=ON): $(tr '\n' ' ' < "$scratch/hardening.log")"
done
echo "deb_test: hardening-check passes for pxfer and pxferd"
mkdir -p "$scratch/srv" "$scratch/etc"
"$root/usr/sbin/pxferd" token create admin --tokens "$scratch/etc/tokens" > /dev/null 2>&1
"$root/usr/sbin/pxferd" --config "$root/etc/pxferd/pxferd.toml" --root "$scratch/srv" --tokens "$scratch/etc/tokens" \
  --check-config > /dev/null || fail "the shipped /etc/pxferd/pxferd.toml does not pass --check-config"
zcat "$root/usr/share/man/man8/pxferd.8.gz" | grep -q 'check\\-config' || fail "pxferd(8) lacks --check-config"
zcat "$root/usr/share/man/man1/pxfer.1.gz" | grep -q 'pxfer put' || fail "pxfer(1) lacks the put command"
# Both completions read --help: run their word lists against the unpacked binaries. (Captured
# first: with pipefail, grep -q closing the pipe early would fail the pipeline.)
bash_words=$(bash -c 'source "$1"; _pxfer_help_words "$2"' _ "$root/usr/share/bash-completion/completions/pxfer" "$root/usr/bin/pxfer")
grep -qx put <<< "$bash_words" || fail "the bash completion does not offer 'put'"
bash_put=$(bash -c 'source "$1"; _pxfer_help_words "$2" put' _ "$root/usr/share/bash-completion/completions/pxfer" "$root/usr/bin/pxfer")
grep -qx -- --block-size <<< "$bash_put" || fail "the bash completion does not offer put --block-size"
if command -v zsh > /dev/null; then
  zsh -n "$root/usr/share/zsh/vendor-completions/_pxfer" || fail "_pxfer: zsh syntax error"
  zsh_put=$(zsh -fc 'source "$1"; _pxfer_help_words "$2" put' _ "$root/usr/share/zsh/vendor-completions/_pxfer" "$root/usr/bin/pxfer")
  grep -qx -- --block-size <<< "$zsh_put" || fail "the zsh completion does not offer put --block-size"
  zsh_d=$(zsh -fc 'source "$1"; _pxfer_help_words "$2"' _ "$root/usr/share/zsh/vendor-completions/_pxfer" "$root/usr/sbin/pxferd")
  grep -qx -- --drain-timeout <<< "$zsh_d" || fail "the zsh completion does not offer pxferd --drain-timeout"
else
  fail "zsh is missing (tools/deps.sh installs it)"
fi
grep -q '^u pxferd ' "$root/usr/lib/sysusers.d/pxferd.conf" || fail "sysusers.d file does not declare pxferd"
unit="$root/usr/lib/systemd/system/pxferd.service"
for line in Type=notify User=pxferd 'ExecReload=/bin/kill -HUP $MAINPID' ProtectSystem=strict \
            'ExecStart=/usr/sbin/pxferd --config /etc/pxferd/pxferd.toml'; do
  grep -qxF -- "$line" "$unit" || fail "pxferd.service lacks '$line'"
done

# The unit as systemd reads it. verify checks that every command exists on this host, so the copy
# it reads runs the unpacked pxferd; --man=no: pxferd(8) is not installed here (checked above).
if ! command -v systemd-analyze > /dev/null; then
  echo "deb_test: systemd-analyze verify SKIPPED: systemd-analyze not found (apt-get install systemd)"
else
  mkdir "$scratch/unit"
  sed "s|=/usr/sbin/pxferd|=$root/usr/sbin/pxferd|" "$unit" > "$scratch/unit/pxferd.service"
  out=$(systemd-analyze verify --man=no "$scratch/unit/pxferd.service" 2>&1) || fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify is not clean: $out"
  echo "deb_test: systemd-analyze verify clean"
fi
echo "deb_test: OK"
