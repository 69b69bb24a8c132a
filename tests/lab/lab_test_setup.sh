# Sourced by the lab tests once they have set WANEM, PXFER, PXFERD, LIB, LAB_TEST_NAME and
# LAB_TEST_TAG: skips (exit 77) without root, /dev/net/tun or the tools; makes the work folder with
# private copies of the binaries, so that a rebuild during the test cannot swap a binary between
# two runs; cleans up on exit; and takes the lab lock.
if [[ $(id -u) -ne 0 || ! -c /dev/net/tun ]]; then
  echo "SKIP: needs root and /dev/net/tun"
  exit 77
fi
for tool in ip python3 flock timeout; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: needs '$tool' (tools/deps.sh installs iproute2 and python3)"
    exit 77
  fi
done

# shellcheck source=../../bench/lab/lib.sh
source "$LIB"
LAB_NAME="$LAB_TEST_NAME$$"
LAB_WORK=$(mktemp -d "/dev/shm/pxlab-$LAB_TEST_TAG.XXXXXX")
mkdir -p "$LAB_WORK/bin"
cp "$WANEM" "$PXFER" "$PXFERD" "$LAB_WORK/bin/" || exit 1
LAB_WANEM=$LAB_WORK/bin/$(basename "$WANEM")
LAB_PXFER=$LAB_WORK/bin/$(basename "$PXFER")
LAB_PXFERD=$LAB_WORK/bin/$(basename "$PXFERD")
cleanup() {
  lab_cleanup
  "$LAB_WANEM" down --name "$LAB_NAME" >/dev/null 2>&1
  rm -rf "$LAB_WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A busy lab is not something this machine lacks: failing says the experiment was never run.
if ! lab_lock /tmp/pxfer-lab.lock 120; then
  echo "FAIL: another lab run (bench/experiments.sh or a lab test) kept /tmp/pxfer-lab.lock for 120 s"
  exit 1
fi
