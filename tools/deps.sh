#!/usr/bin/env bash
# Installs the Debian 12 packages pxfer needs to build, test and run its lab tools.
# Idempotent and quiet when everything is already there. Needs root (or sudo) only to install.
set -euo pipefail

packages=(
  build-essential cmake ninja-build g++ pkg-config
  libboost1.81-dev libssl-dev libspdlog-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libisal-dev libzstd-dev nlohmann-json3-dev
  libsystemd-dev help2man zsh  # pxferd: sd_notify and the journal; man pages from --help; zsh completion check
  dpkg-dev systemd         # cpack -G DEB (dpkg-shlibdeps), systemd-analyze verify (tests/package)
  iproute2 iperf3 iputils-ping openssl bc python3
  strace util-linux  # tests: --sync seen from outside (strace), runs as an unprivileged user (setpriv)
  clang libclang-rt-14-dev  # fuzz/run.sh: libFuzzer targets
  chromium fonts-dejavu-core  # the e2e test that renders a `pxfer report` page (headless screenshot)
  libgfal2-dev gfal2 gfal2-plugin-file gfal2-util-scripts python3-gfal2-util  # the gfal2 plugin and its tests (gfal-copy & co.)
  ccache  # the build's compiler launcher (tools/build.sh, the guide's cmake line)
  libtomlplusplus-dev  # pxferd --config: real TOML with FILE:LINE:COL errors
  lintian devscripts  # tests/package: lintian on the .deb, hardening-check on its binaries
  libjwt-dev python3-jwt  # pxferd --token-issuers: JWT signatures, the issuers file; tests sign tokens
  voms-dev voms-clients python3-cryptography  # pxferd --x509: VOMS ACs (libvomsapi); tests/grid/make_credentials.py (voms-proxy-fake)
  prometheus  # promtool: the metrics test lints pxferd's /metrics with `promtool check metrics`
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "tools/deps.sh: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "tools/deps.sh: missing packages (${missing[*]}) and not root: install them or run as root" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
