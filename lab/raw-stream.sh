#!/bin/bash
# blesend lab: raw goodput baselines, no protocol: GATT AcquireWrite and WriteValue(type=command)
# (raw-stream.py), and an LE L2CAP channel with 4096- and 510-byte SDUs (raw-l2cap.py).
#
# Usage: lab/raw-stream.sh [--bytes N] [vmrun options]
#   On the host it boots one VM (run-suite.sh: bt-up first) and runs both measurements there;
#   inside a lab VM that already ran bt-up.sh (BLESEND_LAB_BT=1) it runs them directly.
#   BT_MAINCONF='[GATT]\nChannels=1' measures without EATT.
# Prints one JSON line per mode (see raw-stream.py, raw-l2cap.py) and a summary; exit 0 iff every
# byte arrived.
set -euo pipefail
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BYTES=$((1 << 20))
vm_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) BYTES=${2:?--bytes needs a value}; shift;;
    -h|--help) sed -n '2,11p' "$0"; exit 0;;
    *) vm_opts+=("$1");;
  esac
  shift
done
case "$BYTES" in ''|*[!0-9]*) echo "raw-stream: --bytes must be a number" >&2; exit 2;; esac

if [ "${BLESEND_LAB_BT:-}" != 1 ]; then
  exec "$LAB/run-suite.sh" "${vm_opts[@]}" -- "$LAB/raw-stream.sh" --bytes "$BYTES"
fi

# ---- inside the VM, Bluetooth up ----
results=/run/blesend-lab/raw-stream.jsonl
: > "$results"
rc=0
for mode in acquirewrite writevalue l2cap-4096 l2cap-510; do
  cmd=("$LAB/raw-stream.py" run --bytes "$BYTES")
  case "$mode" in
    writevalue) cmd+=(--writevalue);;
    l2cap-*) cmd=("$LAB/raw-l2cap.py" run --bytes "$BYTES" --sdu "${mode#l2cap-}");;
  esac
  echo "raw-stream: $mode, $BYTES bytes, central hci1 -> peripheral hci0" >&2
  if ! /usr/bin/python3 "${cmd[@]}" | tee -a "$results"; then
    echo "raw-stream: $mode FAILED" >&2
    rc=1
  fi
done
[ -n "${BLESEND_LAB_OUT:-}" ] && cp "$results" "$BLESEND_LAB_OUT/" 2>/dev/null
echo "raw-stream summary (EATT $([ -n "${BT_MAINCONF:-}" ] && echo "per BT_MAINCONF" || echo "default on")):"
/usr/bin/python3 - "$results" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["mode"] == "l2cap":
        print("  %-12s %8.1f KiB/s  %d/%d bytes in %.2f s  (%d-byte SDUs, send MTU %d)"
              % ("l2cap", r["kib_per_s"], r["received"], r["bytes"], r["seconds"], r["sdu"], r["sndmtu"]))
        continue
    print("  %-12s %8.1f KiB/s  %d/%d bytes in %.2f s  (ATT MTU %d, %d-byte chunks)"
          % (r["mode"], r["kib_per_s"], r["received"], r["bytes"], r["seconds"], r["mtu"], r["chunk"]))
PY
exit "$rc"
