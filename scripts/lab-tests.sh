#!/bin/bash
# Host side: build, prepare the lab, run the end-to-end and fault suites in the VM, on each image.
#
# Usage: scripts/lab-tests.sh [--no-build] [--no-setup] [--release] [--goodput] [--images "host trixie"]
#                             [--faults-on "host"] [--soak-on trixie] [--package-on trixie]
#                             [--senders-on "host trixie"] [--list] [--boot IMAGE/BOOT]...
#                             [vmrun options]
#   --list: print the cases of the boots these options select, one a line (IMAGE/BOOT: CASE)
#   --boot IMAGE/BOOT: run only that boot of the list (repeatable); --no-setup: the lab is set up
#     already (lab/setup.sh for each image, --bumble for the senders boots; scripts/test.sh does it)
#   per image (default both; $BLESEND_LAB_IMAGES):
#     boot: default main.conf          -> Tests/Lab/e2e.sh main  (every case but the MTU one)
#     boot: [GATT] ExchangeMTU=48      -> Tests/Lab/e2e.sh mtu   (forced small MTU)
#     boot: three controllers          -> Tests/Lab/e2e.sh discovery (two receivers: private discovery, then the ordinary way)
#   on the images in --senders-on (default both; $BLESEND_LAB_SENDERS_ON; "" skips it):
#     boot: three bumble controllers   -> Tests/Lab/senders.sh (several senders at once; needs
#       lab/setup.sh --bumble, run here: btvirt cannot hold two links on one controller)
#   on the images in --faults-on (default both; $BLESEND_LAB_FAULTS_ON):
#     boot: default main.conf          -> Tests/Lab/faults.sh --skip soak (faults, attacks; ~13 min)
#     on the images in --soak-on (default: the same; $BLESEND_LAB_SOAK_ON), a boot of its own:
#       default main.conf              -> Tests/Lab/faults.sh soak (50 transfers, ~4 min)
#   on the image in --package-on (default trixie; $BLESEND_LAB_PACKAGE_ON; "" skips it):
#     scripts/package.sh builds the .deb; a boot installs and tests it (scripts/test-package.sh;
#     on trixie with systemd as PID 1, vmrun.sh --systemd, so blerecv.service runs as installed)
#   --goodput: a further boot on the first image runs scripts/lab-goodput.sh
# Image host runs .build/debug (swift build), or with --release the binaries trixie runs; image
# trixie has no Swift toolchain and runs the statically linked release binaries in
# .build-static/release (scripts/build-static.sh), whose remaining shared libraries are checked
# against the trixie root first.
# Exit status: 0 if every boot passed, else the first failing boot's status.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
build=1
goodput=0
images=${BLESEND_LAB_IMAGES:-host trixie}
faults_on=${BLESEND_LAB_FAULTS_ON:-host trixie}
soak_on=${BLESEND_LAB_SOAK_ON-$faults_on}
release=0
package_on=${BLESEND_LAB_PACKAGE_ON-trixie}
senders_on=${BLESEND_LAB_SENDERS_ON-host trixie}
vm_opts=()
only=()
list=0
setup=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0;;
    --release) release=1;;
    --goodput) goodput=1;;
    --images) images=${2:?}; shift;;
    --faults-on) faults_on=${2:?}; shift;;
    --soak-on) soak_on=$2; shift;;
    --package-on) package_on=$2; shift;;
    --senders-on) senders_on=$2; shift;;
    --list) list=1;;
    --boot) only+=("${2:?--boot needs IMAGE/BOOT}"); shift;;
    --no-setup) setup=0;;
    -h|--help) sed -n '2,33p' "$0"; exit 0;;
    *) vm_opts+=("$1");;
  esac
  shift
done
WORK=${BLESEND_LAB_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/blesend-lab}
STATIC=$ROOT/.build-static/release
has() { case " $1 " in *" $2 "*) return 0;; esac; return 1; }

# The boots, one IMAGE/BOOT a line, in the order they run one after another; --list prints them
# with what each runs, --boot picks some (scripts/test.sh runs them two at a time).
boots() {
  local image
  for image in $images; do
    echo "$image/e2e-main  Tests/Lab/e2e.sh main"
    echo "$image/e2e-mtu  Tests/Lab/e2e.sh mtu (ExchangeMTU=48)"
    echo "$image/e2e-discovery  Tests/Lab/e2e.sh discovery (three btvirt controllers)"
    has "$senders_on" "$image" && echo "$image/senders  Tests/Lab/senders.sh (three bumble controllers)"
    if has "$faults_on" "$image"; then
      echo "$image/faults  Tests/Lab/faults.sh --skip soak"
      has "$soak_on" "$image" && echo "$image/soak  Tests/Lab/faults.sh soak (a boot of its own: two VMs at once share the work better)"
    fi
  done
  has "$images" "$package_on" && echo "$package_on/package  scripts/test-package.sh (the .deb; systemd as PID 1 on trixie)"
  [ "$goodput" = 1 ] && echo "${images%% *}/goodput  scripts/lab-goodput.sh"
  return 0
}
# cases BOOT: the cases a boot runs, one a line, read from the suites themselves (faults.sh and
# senders.sh: CASES; e2e.sh main: the titles of MAIN_CASES and the @functions it calls).
suite_cases() { sed -n 's/^CASES=(\(.*\))$/\1/p' "$1" | tr ' ' '\n'; }
cases() {
  case "$1" in
    e2e-main) awk '/^read -r -d .. MAIN_CASES/ { on = 1; next } /^TABLE$/ { on = 0 }
                   on && /^@/ { print substr($0, 2) } on && !/^[@+]/ { sub(/ \| .*/, ""); print }' Tests/Lab/e2e.sh;;
    e2e-mtu) echo "run_mtu: forced small MTU"; echo "run_att: EATT off, ATT on CID 4";;
    e2e-discovery) echo "run_discovery: private discovery, two receivers"; echo "run_receivers: two ordinary receivers"
                   echo "run_pairing: pairing by a short code, a wrong code, a relay in the middle";;
    senders) suite_cases Tests/Lab/senders.sh;;
    faults) suite_cases Tests/Lab/faults.sh | grep -vx soak;;
    soak) echo soak;;
    package) echo "test-package.sh: install the .deb, blerecv.service, a file from an ordinary user";;
    goodput) echo "lab-goodput.sh";;
  esac
}
if [ "$list" = 1 ]; then
  boots | while read -r b what; do image=${b%%/*}; cases "${b#*/}" | sed "s|^|$b: |"; done
  exit 0
fi
mapfile -t selected < <(boots | awk '{print $1}')
if [ ${#only[@]} = 0 ]; then   # say what these options leave out, so a gap is never silent
  for image in $images; do
    has "$faults_on" "$image" || echo "== [$image] faults: not run on this image (--faults-on '$faults_on'; lab/README.md, \"CI\")"
  done
  if [ -n "$package_on" ] && ! has "$images" "$package_on"; then
    echo "== package: not tested (--package-on '$package_on' is not among the images '$images')"
  fi
fi
if [ ${#only[@]} -gt 0 ]; then
  for b in "${only[@]}"; do
    has "${selected[*]}" "$b" || { echo "lab-tests: $b is not among the boots (scripts/lab-tests.sh --list)" >&2; exit 2; }
  done
  selected=("${only[@]}")
  images=$(printf '%s\n' "${only[@]%%/*}" | sort -u | tr '\n' ' ')
fi

if [ "$build" = 1 ]; then
  if has "$images" host && [ "$release" = 0 ]; then
    echo "== swift build"
    swift build || { echo "lab-tests: swift build failed" >&2; exit 1; }
  fi
  if has "$images" trixie || [ "$release" = 1 ]; then
    echo "== scripts/build-static.sh (the release binaries: trixie, or every image with --release)"
    scripts/build-static.sh || { echo "lab-tests: the static build failed" >&2; exit 1; }
  fi
fi

rc=0
if [ "$setup" = 1 ]; then
  for image in $images; do
    echo "== lab/setup.sh --image $image"
    lab/setup.sh --image "$image" || { echo "lab-tests: lab/setup.sh --image $image failed" >&2; exit 1; }
  done
  if printf '%s\n' "${selected[@]}" | grep -q /senders; then
    echo "== lab/setup.sh --bumble (the several-senders boot's controllers)"
    lab/setup.sh --bumble || { echo "lab-tests: lab/setup.sh --bumble failed" >&2; exit 1; }
  fi
fi
if has "$images" trixie; then
  # The static binaries still link a few shared libraries; each must resolve inside the trixie root.
  # Ask trixie's own loader, with trixie's library folder only (the host's ldd would list the host's
  # dependency tree: bookworm's libsystemd pulls in libgcrypt, trixie's does not).
  TROOT=$WORK/trixie/root
  for b in "$STATIC/blesend" "$STATIC/blerecv" "$STATIC/blesend-labcheck"; do
    [ -x "$b" ] || { echo "lab-tests: $b missing (build without --no-build first)" >&2; exit 1; }
    libs=$("$TROOT/usr/lib64/ld-linux-x86-64.so.2" --inhibit-cache --library-path "$TROOT/usr/lib/x86_64-linux-gnu" --list "$b") \
      || { echo "lab-tests: trixie's loader cannot load $b:" >&2; echo "$libs" >&2; exit 1; }
    outside=$(echo "$libs" | awk -v r="$TROOT/" '$2 == "=>" && index($3, r) != 1 {print $1 " => " $3}')
    [ -z "$outside" ] || { echo "lab-tests: $b needs libraries the trixie image lacks: $outside" >&2; exit 1; }
  done
  echo "== static binaries link only: $(echo "$libs" | awk '$2 == "=>" {printf "%s ", $1}')(all in the trixie root)"
fi

# kernel_bug_struck LOG: a boot's console (LOG) shows the list corruption that kernels before 6.12
# lack the fix for (lab/README.md, "The hci_chan_del BUG"): an oops in list_del on such a kernel.
# bluetoothd dies or hangs with it, so what the suite saw afterwards says nothing of blesend.
kernel_bug_struck() {
  grep -qE 'list_del corruption|__list_del_entry_valid' "$1" || return 1
  grep -oE '(Not tainted|Tainted: [A-Z ]+) [0-9]+\.[0-9]+' "$1" |
    awk '{ split($NF, v, "."); if (v[1] < 6 || (v[1] == 6 && v[2] < 12)) old = 1 } END { exit !old }'
}
# step NAME command...: runs a boot; once more if the kernel bug above struck it (never a third time).
step() {
  local name=$1; shift
  local start r attempt log
  log=$(mktemp)
  for attempt in 1 2; do
    echo "== $name"
    start=$SECONDS
    "$@" 2>&1 | tee "$log"
    r=${PIPESTATUS[0]}
    echo "== $name: exit $r after $((SECONDS - start)) s"
    [ "$r" != 0 ] && [ "$attempt" = 1 ] && kernel_bug_struck "$log" || break
    echo "== $name: kernel bug struck: the guest's kernel hit its list corruption in hci_chan_del (fixed in 6.12, lab/README.md), so this result says nothing of blesend; the boot runs once more"
  done
  rm -f "$log"
  [ "$rc" = 0 ] && [ "$r" != 0 ] && rc=$r
  return 0
}
# binaries IMAGE: sets bin to the environment that names the binaries IMAGE's boots run.
binaries() {
  bin=()
  if [ "$1" = trixie ] || [ "$release" = 1 ]; then bin=(BLESEND_BIN="$STATIC"); fi
}
# run_boot IMAGE/BOOT: one boot of the list above (its_boots), as its own step.
run_boot() {
  local image=${1%%/*} boot=${1#*/}
  binaries "$image"
  case "$boot" in
    e2e-main) step "[$image] e2e main (default main.conf)" \
      env "${bin[@]}" lab/run-suite.sh --image "$image" --timeout 900 "${vm_opts[@]}" -- Tests/Lab/e2e.sh main;;
    e2e-mtu) step "[$image] e2e mtu (ExchangeMTU=48)" \
      env "${bin[@]}" BT_MAINCONF='[GATT]\nExchangeMTU=48' lab/run-suite.sh --image "$image" --timeout 600 "${vm_opts[@]}" -- Tests/Lab/e2e.sh mtu;;
    e2e-discovery) step "[$image] e2e discovery (three controllers, two receivers)" \
      env "${bin[@]}" BTVIRT_ARGS='-L -l3' BT_NCTRL=3 lab/run-suite.sh --image "$image" --timeout 600 "${vm_opts[@]}" -- Tests/Lab/e2e.sh discovery;;
    senders) step "[$image] senders (three bumble controllers: several senders at once)" \
      env "${bin[@]}" BT_CONTROLLERS=bumble BT_NCTRL=3 lab/run-suite.sh --image "$image" --timeout 900 "${vm_opts[@]}" -- Tests/Lab/senders.sh;;
    faults)
      # (1500 s: with another VM on the other core the trixie boot, the soak included, took 1220 s, issue 30)
      step "[$image] faults (default main.conf), every case but the soak" \
        env "${bin[@]}" lab/run-suite.sh --image "$image" --timeout 1500 "${vm_opts[@]}" -- Tests/Lab/faults.sh --skip soak;;
    soak) step "[$image] soak (default main.conf): 50 transfers, blerecv's RSS and descriptors" \
        env "${bin[@]}" lab/run-suite.sh --image "$image" --timeout 900 "${vm_opts[@]}" -- Tests/Lab/faults.sh soak;;
    package)
      echo "== scripts/package.sh"
      # On trixie systemd is PID 1 for this boot, so the unit runs with its whole sandbox.
      local sd=() deb
      [ "$image" = trixie ] && sd=(--systemd)
      if deb=$(scripts/package.sh | tail -n 1) && [ -f "$deb" ]; then
        step "[$image] package: install, start blerecv.service, send as an ordinary user" \
          lab/run-suite.sh --image "$image" "${sd[@]}" --timeout 600 "${vm_opts[@]}" -- scripts/test-package.sh --deb "$deb"
      else
        echo "lab-tests: scripts/package.sh failed" >&2
        [ "$rc" = 0 ] && rc=1
      fi;;
    goodput) step "[$image] goodput (blesend vs raw-stream)" \
      env "${bin[@]}" lab/run-suite.sh --image "$image" --timeout 900 "${vm_opts[@]}" -- scripts/lab-goodput.sh;;
    *) echo "lab-tests: unknown boot $1 (scripts/lab-tests.sh --list)" >&2; [ "$rc" = 0 ] && rc=2;;
  esac
}
for b in "${selected[@]}"; do run_boot "$b"; done
[ "$rc" = 0 ] && echo "lab-tests: all passed" || echo "lab-tests: FAILED (exit $rc)" >&2
exit "$rc"
