#!/bin/bash
# blesend goodput vs the raw GATT baseline, in ONE lab VM boot (same link, same emulation load).
#
# Usage: scripts/lab-goodput.sh [--bytes N] [--runs K] [--wv-bytes N] [vmrun options]
#   On the host it boots the VM through lab/run-suite.sh; inside the VM it measures:
#   1. blesend -> blerecv, N bytes (default 1 MiB), K times (default 2), with timestamped --json
#      events: wall time, file time (sender's file-done), time to first file byte after connect
#      (sender "connected" -> receiver's first "progress", i.e. first bytes written), handshake time;
#   2. raw-stream.py AcquireWrite, N bytes;  3. raw-stream.py WriteValue(type=command), --wv-bytes.
#   Prints one "# GOODPUT ..." summary and the ratio blesend / raw AcquireWrite.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BYTES=$((1 << 20))
RUNS=2
WV_BYTES=$((1 << 20))
vm_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) BYTES=$2; shift;;
    --runs) RUNS=$2; shift;;
    --wv-bytes) WV_BYTES=$2; shift;;
    -h|--help) sed -n '2,11p' "$0"; exit 0;;
    *) vm_opts+=("$1");;
  esac
  shift
done
if [ "${BLESEND_LAB_BT:-}" != 1 ]; then
  exec "$ROOT/lab/run-suite.sh" --timeout 900 "${vm_opts[@]}" -- "$ROOT/scripts/lab-goodput.sh" \
    --bytes "$BYTES" --runs "$RUNS" --wv-bytes "$WV_BYTES"
fi

# ---- inside the VM ----
BIN=${BLESEND_BIN:-$ROOT/.build/debug}
W=$(mktemp -d /run/blesend-goodput.XXXXXX)
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# stamp FILE: copies stdin lines to FILE, each prefixed with the arrival time (one clock for both tools)
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done > "$1"; }

"$BIN/blesend" keygen -o "$W/s" > /dev/null 2>&1 && "$BIN/blesend" keygen -o "$W/r" > /dev/null 2>&1 \
  && "$BIN/blerecv" trust "$W/s.pub" --name s --dir "$W/trust" > /dev/null 2>&1 || { echo "keys failed" >&2; exit 2; }
head -c "$BYTES" /dev/urandom > "$W/payload.bin"
rc=0
results=$W/results.txt
: > "$results"
for i in $(seq 1 "$RUNS"); do
  out=$W/out$i
  mkdir -p "$out"
  "$BIN/blerecv" --adapter hci0 --trust "$W/trust" --key "$W/r" --out "$out" --once --json 2> "$W/recv$i.err" \
    | stamp "$W/recv$i.jsonl" &
  rp=$!
  PIDS+=("$rp")
  for _ in $(seq 1 300); do grep -q '"listening"' "$W/recv$i.jsonl" 2>/dev/null && break; sleep 0.1; done
  t0=$EPOCHREALTIME
  timeout 300 "$BIN/blesend" --adapter hci1 --key "$W/s" --to "$W/r.pub" --json "$W/payload.bin" 2> "$W/send$i.err" \
    | stamp "$W/send$i.jsonl"
  src=${PIPESTATUS[0]}
  t1=$EPOCHREALTIME
  for _ in $(seq 1 200); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
  if [ "$src" != 0 ] || ! cmp -s "$W/payload.bin" "$out/payload.bin"; then
    echo "goodput: blesend run $i FAILED (exit $src)" >&2
    tail -n 20 "$W/send$i.err" "$W/recv$i.err" >&2
    rc=1
    continue
  fi
  /usr/bin/python3 - "$W/send$i.jsonl" "$W/recv$i.jsonl" "$t0" "$t1" "$BYTES" >> "$results" <<'PY'
import json, sys
send, recv, t0, t1, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
def events(path):
    out = []
    for line in open(path):
        t, _, rest = line.partition(" ")
        out.append((float(t), json.loads(rest)))
    return out
def first(evs, name, cond=lambda o: True):
    return next(((t, o) for t, o in evs if o["event"] == name and cond(o)), (None, None))
s, r = events(send), events(recv)
tc, c = first(s, "connected")
th, _ = first(s, "handshake")
tp, _ = first(r, "progress", lambda o: (o.get("bytes") or 0) > 0)
tfd, fd = first(s, "file-done")
file_s = fd["seconds"]
res = {"mode": "blesend", "bytes": n, "wall_s": round(t1 - t0, 2),
       "scan_connect_s": round(tc - t0, 2), "connect_to_handshake_s": round(th - tc, 2),
       "connect_to_first_byte_s": round(tp - tc, 2) if tp else None,
       "connected_to_file_done_s": round(tfd - tc, 2),
       "file_s": file_s, "kib_per_s_file": round(n / 1024 / file_s, 1) if file_s else None,
       "kib_per_s_connected": round(n / 1024 / (tfd - tc), 1), "mtu": c.get("mtu")}
print(json.dumps(res))
PY
  tail -n 1 "$results"
done

for mode in acquirewrite writevalue; do
  flag=(); b=$BYTES
  [ "$mode" = writevalue ] && { flag=(--writevalue); b=$WV_BYTES; }
  echo "goodput: raw-stream $mode, $b bytes" >&2
  if ! timeout 300 /usr/bin/python3 "$ROOT/lab/raw-stream.py" run --bytes "$b" "${flag[@]}" 2> "$W/raw-$mode.err" >> "$results"; then
    echo "goodput: raw-stream $mode FAILED" >&2; tail -n 20 "$W/raw-$mode.err" >&2; rc=1
  fi
  tail -n 1 "$results"
done
[ -n "${BLESEND_LAB_OUT:-}" ] && cp "$results" "$BLESEND_LAB_OUT/goodput.jsonl" 2>/dev/null
/usr/bin/python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bs = [r for r in rows if r["mode"] == "blesend"]
aw = next((r for r in rows if r["mode"] == "acquirewrite"), None)
wv = next((r for r in rows if r["mode"] == "writevalue"), None)
print("# GOODPUT summary (TCG lab; compare only within this boot)")
for r in bs:
    print("#   blesend   %7.1f KiB/s file (%.2f s), %7.1f KiB/s connect->done, wall %.2f s, scan+connect %.2f s, "
          "connect->handshake %.2f s, connect->first byte %.2f s, MTU %s"
          % (r["kib_per_s_file"], r["file_s"], r["kib_per_s_connected"], r["wall_s"], r["scan_connect_s"],
             r["connect_to_handshake_s"], r["connect_to_first_byte_s"] or -1, r["mtu"]))
for r in (aw, wv):
    if r:
        print("#   raw %-12s %7.1f KiB/s (%d bytes in %.2f s, MTU %d, chunk %d)"
              % (r["mode"], r["kib_per_s"], r["bytes"], r["seconds"], r["mtu"], r["chunk"]))
if bs and aw:
    best = max(r["kib_per_s_file"] for r in bs)
    print("#   ratio blesend(best file goodput)/raw AcquireWrite = %.2f" % (best / aw["kib_per_s"]))
if aw and wv:
    print("#   ratio AcquireWrite/WriteValue = %.1f" % (aw["kib_per_s"] / wv["kib_per_s"]))
PY
exit "$rc"
