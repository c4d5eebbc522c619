#!/bin/bash
# blesend goodput vs the raw GATT and raw L2CAP baselines, in ONE lab VM boot (same link, same load).
#
# Usage: scripts/lab-goodput.sh [--bytes N] [--runs K] [--small-runs K] [--wv-bytes N] [vmrun options]
#   On the host it boots the VM through lab/run-suite.sh; inside the VM it measures:
#   1. blesend -> blerecv, N bytes (default 1 MiB), K times (default 2) with --transport gatt and K
#      times with --transport l2cap (timestamped --json events: wall, file time, connect->handshake);
#   2. a 1-byte file sent --small-runs times (default 3), receiver already advertising, blesend's
#      default transport: medians of wall time and of its phases (startup, scan, connect,
#      handshake, transfer, close, exit);
#   3. raw baselines: raw-stream.py AcquireWrite (N bytes; one send(2) per chunk, then 32 chunks
#      per sendmmsg(2) as blesend sends), raw-l2cap.py with 4096- and 510-byte SDUs (N bytes),
#      raw-stream.py WriteValue(type=command) (--wv-bytes, 0 skips it).
#   Prints a "# GOODPUT summary": the raw figures, blesend per transport, the ratios blesend/raw per
#   transport, blesend / the better raw per transport (goal >= 0.95), blesend-L2CAP/raw-GATT
#   (goal >= 2.0), and the 1-byte breakdown.
#   If blesend has no --transport option, the GATT runs go without it and the L2CAP runs are skipped.
#   BLESEND_RECV_ARGS: extra blerecv options; BLESEND_SMALL_TRANSPORT: --transport of the 1-byte runs.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BYTES=$((1 << 20))
RUNS=2
SMALL_RUNS=3
WV_BYTES=$((1 << 20))
vm_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) BYTES=$2; shift;;
    --runs) RUNS=$2; shift;;
    --small-runs) SMALL_RUNS=$2; shift;;
    --wv-bytes) WV_BYTES=$2; shift;;
    -h|--help) sed -n '2,18p' "$0"; exit 0;;
    *) vm_opts+=("$1");;
  esac
  shift
done
if [ "${BLESEND_LAB_BT:-}" != 1 ]; then
  exec "$ROOT/lab/run-suite.sh" --timeout 900 "${vm_opts[@]}" -- "$ROOT/scripts/lab-goodput.sh" \
    --bytes "$BYTES" --runs "$RUNS" --small-runs "$SMALL_RUNS" --wv-bytes "$WV_BYTES"
fi

# ---- inside the VM ----
BIN=${BLESEND_BIN:-$ROOT/.build/debug}
PY=/usr/bin/python3
W=$(mktemp -d /run/blesend-goodput.XXXXXX)
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# stamp FILE: copies stdin lines to FILE, each prefixed with the arrival time (one clock for both tools)
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done > "$1"; }
read -r -a RECV_ARGS <<< "${BLESEND_RECV_ARGS:-}"

"$BIN/blesend" keygen -o "$W/s" > /dev/null 2>&1 && "$BIN/blesend" keygen -o "$W/r" > /dev/null 2>&1 \
  && "$BIN/blerecv" trust "$W/s.pub" --name s --dir "$W/trust" > /dev/null 2>&1 || { echo "keys failed" >&2; exit 2; }
head -c "$BYTES" /dev/urandom > "$W/payload.bin"
head -c 1 /dev/urandom > "$W/one.bin"
HAVE_TRANSPORT=0
# (Read the whole help first: grep -q quits at the first match, and with pipefail the SIGPIPE that
# a long help then meets read as "no --transport".)
send_help=$("$BIN/blesend" help send 2>&1)
case "$send_help" in *--transport*) HAVE_TRANSPORT=1;; esac
[ "$HAVE_TRANSPORT" = 1 ] || echo "goodput: this blesend has no --transport: GATT runs without it, L2CAP runs skipped" >&2
rc=0
results=$W/results.txt
: > "$results"

# send_once TAG FILE TRANSPORT: blerecv on hci0 (waits until it advertises), then blesend on hci1
# with --transport TRANSPORT ("" = none). Leaves $W/send$TAG.jsonl, $W/recv$TAG.jsonl and the
# times T0/T1 (blesend started / exited); returns 0 iff the file arrived intact.
send_once() {
  local tag=$1 file=$2 transport=$3 out=$W/out$1 rp src topt=()
  [ -n "$transport" ] && topt=(--transport "$transport")
  mkdir -p "$out"
  "$BIN/blerecv" --adapter hci0 --trust "$W/trust" --key "$W/r" --out "$out" --once --json "${RECV_ARGS[@]}" \
    2> "$W/recv$tag.err" | stamp "$W/recv$tag.jsonl" &
  rp=$!
  PIDS+=("$rp")
  for _ in $(seq 1 300); do grep -q '"listening"' "$W/recv$tag.jsonl" 2>/dev/null && break; sleep 0.1; done
  T0=$EPOCHREALTIME
  timeout 300 "$BIN/blesend" --adapter hci1 --key "$W/s" --to "$W/r.pub" --json "${topt[@]}" "$file" \
    2> "$W/send$tag.err" | stamp "$W/send$tag.jsonl"
  src=${PIPESTATUS[0]}
  T1=$EPOCHREALTIME
  for _ in $(seq 1 200); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
  if [ "$src" != 0 ] || ! cmp -s "$file" "$out/$(basename "$file")"; then
    echo "goodput: blesend run $tag FAILED (exit $src)" >&2
    tail -n 20 "$W/send$tag.err" "$W/recv$tag.err" >&2
    return 1
  fi
}

# 1. blesend, N bytes, per transport
for transport in gatt l2cap; do
  topt=$transport
  if [ "$HAVE_TRANSPORT" = 0 ]; then
    [ "$transport" = l2cap ] && continue
    topt=""
  fi
  for i in $(seq 1 "$RUNS"); do
    tag=$transport$i
    echo "goodput: blesend --transport ${topt:-(none)}, $BYTES bytes, run $i" >&2
    send_once "$tag" "$W/payload.bin" "$topt" || { rc=1; continue; }
    $PY - "$W/send$tag.jsonl" "$W/recv$tag.jsonl" "$T0" "$T1" "$BYTES" "$transport" "${topt:-none}" >> "$results" <<'PY'
import json, sys
send, recv, t0, t1, n, transport, opt = sys.argv[1:8]
t0, t1, n = float(t0), float(t1), int(n)
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
res = {"mode": "blesend", "transport": transport, "transport_option": opt,
       "transport_used": c.get("transport"), "bytes": n, "wall_s": round(t1 - t0, 2),
       "scan_connect_s": round(tc - t0, 2), "connect_to_handshake_s": round(th - tc, 2),
       "connect_to_first_byte_s": round(tp - tc, 2) if tp else None,
       "connected_to_file_done_s": round(tfd - tc, 2),
       "file_s": file_s, "kib_per_s_file": round(n / 1024 / file_s, 1) if file_s else None,
       "kib_per_s_connected": round(n / 1024 / (tfd - tc), 1), "mtu": c.get("mtu"),
       "payload": c.get("payload")}
print(json.dumps(res))
PY
    tail -n 1 "$results"
  done
done

# 2. a 1-byte send, K times: where the wall time goes
stransport=${BLESEND_SMALL_TRANSPORT:-}
[ "$HAVE_TRANSPORT" = 0 ] && stransport=""
for i in $(seq 1 "$SMALL_RUNS"); do
  tag=small$i
  echo "goodput: blesend 1-byte file, transport ${stransport:-default}, run $i" >&2
  send_once "$tag" "$W/one.bin" "$stransport" || { rc=1; continue; }
  $PY - "$W/send$tag.jsonl" "$T0" "$T1" "${stransport:-default}" >> "$results" <<'PY'
import json, sys
send, t0, t1, transport = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
evs = []
for line in open(send):
    t, _, rest = line.partition(" ")
    evs.append((float(t), json.loads(rest)))
def at(name):
    return next((t for t, o in evs if o["event"] == name), None)
ts, tf, tc, th, tfd, td = (at(n) for n in ("scanning", "found", "connected", "handshake", "file-done", "done"))
last = evs[-1][0] if evs else None
def d(a, b):
    return round(b - a, 3) if a is not None and b is not None else None
conn = next((o for t, o in evs if o["event"] == "connected"), {})
print(json.dumps({"mode": "small", "transport": transport, "transport_used": conn.get("transport"),
                  "wall_s": d(t0, t1), "startup_s": d(t0, ts), "scan_s": d(ts, tf), "connect_s": d(tf, tc),
                  "handshake_s": d(tc, th), "transfer_s": d(th, tfd), "close_s": d(tfd, td),
                  "exit_s": d(last, t1)}))
PY
  tail -n 1 "$results"
done

# 3. raw baselines (after blesend: they leave device objects in bluetoothd that a scan could trip on)
raw() {   # raw NAME COMMAND...: one JSON line into $results
  local name=$1; shift
  echo "goodput: raw $name" >&2
  if ! timeout 300 "$@" 2> "$W/raw-$name.err" >> "$results"; then
    echo "goodput: raw $name FAILED" >&2; tail -n 20 "$W/raw-$name.err" >&2; rc=1
  fi
  tail -n 1 "$results"
}
raw acquirewrite $PY "$ROOT/lab/raw-stream.py" run --bytes "$BYTES"
raw acquirewrite-batch32 $PY "$ROOT/lab/raw-stream.py" run --bytes "$BYTES" --batch 32
raw l2cap-4096 $PY "$ROOT/lab/raw-l2cap.py" run --bytes "$BYTES" --sdu 4096
raw l2cap-510 $PY "$ROOT/lab/raw-l2cap.py" run --bytes "$BYTES" --sdu 510
[ "$WV_BYTES" -gt 0 ] && raw writevalue $PY "$ROOT/lab/raw-stream.py" run --bytes "$WV_BYTES" --writevalue

[ -n "${BLESEND_LAB_OUT:-}" ] && cp "$results" "$BLESEND_LAB_OUT/goodput.jsonl" 2>/dev/null
$PY - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
def raw(mode, sdu=None, batch=1):
    return next((r for r in rows if r["mode"] == mode and (sdu is None or r.get("sdu") == sdu)
                 and r.get("batch", 1) == batch), None)
aw, awb, wv = raw("acquirewrite"), raw("acquirewrite", batch=32), raw("writevalue")
l2, l2s = raw("l2cap", 4096), raw("l2cap", 510)
def better(*rs):
    rs = [r for r in rs if r]
    return max(rs, key=lambda r: r["kib_per_s"]) if rs else None
bs = {t: [r for r in rows if r["mode"] == "blesend" and r["transport"] == t] for t in ("gatt", "l2cap")}
small = [r for r in rows if r["mode"] == "small"]
print("# GOODPUT summary (TCG lab; compare only within this boot)")
for r, how in ((aw, "send"), (awb, "sendmmsg x32")):
    if r:
        print("#   raw GATT AcquireWrite     %7.1f KiB/s (%d bytes in %.2f s, ATT MTU %d, chunk %d, %s)"
              % (r["kib_per_s"], r["bytes"], r["seconds"], r["mtu"], r["chunk"], how))
for r in (l2, l2s):
    if r:
        print("#   raw L2CAP, SDU %-5d      %7.1f KiB/s (%d bytes in %.2f s, send MTU %d)"
              % (r["sdu"], r["kib_per_s"], r["bytes"], r["seconds"], r["sndmtu"]))
if wv:
    print("#   raw GATT WriteValue       %7.1f KiB/s (%d bytes in %.2f s)" % (wv["kib_per_s"], wv["bytes"], wv["seconds"]))
best = {}
for t, label in (("gatt", "GATT "), ("l2cap", "L2CAP")):
    if not bs[t]:
        print("#   blesend %s             (no run%s)" % (label, "" if t == "gatt" else ": no --transport option, or it failed"))
    for r in bs[t]:
        print("#   blesend %s (%s)  %7.1f KiB/s file (%.2f s), %7.1f KiB/s connect->done, wall %.2f s, "
              "scan+connect %.2f s, connect->handshake %.2f s, connect->first byte %.2f s, ATT MTU %s, payload %s%s"
              % (label, r["transport_option"], r["kib_per_s_file"], r["file_s"], r["kib_per_s_connected"],
                 r["wall_s"], r["scan_connect_s"], r["connect_to_handshake_s"], r["connect_to_first_byte_s"] or -1,
                 r["mtu"], r.get("payload"), ", used %s" % r["transport_used"] if r.get("transport_used") else ""))
    if bs[t]:
        best[t] = max(r["kib_per_s_file"] for r in bs[t])
def ratio(name, a, b):
    if a and b:
        print("#   ratio %-40s = %.2f" % (name, a / b))
rawgatt, rawl2 = better(aw, awb), better(l2, l2s)
ratio("blesend GATT / raw GATT (AcquireWrite)", best.get("gatt"), aw and aw["kib_per_s"])
ratio("blesend GATT / raw GATT (sendmmsg x32)", best.get("gatt"), awb and awb["kib_per_s"])
ratio("blesend GATT / better raw GATT (goal >= 0.95)", best.get("gatt"), rawgatt and rawgatt["kib_per_s"])
ratio("blesend L2CAP / raw L2CAP (SDU 4096)", best.get("l2cap"), l2 and l2["kib_per_s"])
ratio("blesend L2CAP / raw L2CAP (SDU 510)", best.get("l2cap"), l2s and l2s["kib_per_s"])
ratio("blesend L2CAP / better raw L2CAP (goal >= 0.95)", best.get("l2cap"), rawl2 and rawl2["kib_per_s"])
ratio("blesend L2CAP / raw GATT (goal >= 2.0)", best.get("l2cap"), aw and aw["kib_per_s"])
ratio("raw L2CAP (SDU 4096) / raw GATT", l2 and l2["kib_per_s"], aw and aw["kib_per_s"])
ratio("raw AcquireWrite / WriteValue", aw and aw["kib_per_s"], wv and wv["kib_per_s"])
if small:
    def med(k):
        v = [r[k] for r in small if r.get(k) is not None]
        return "%6.2f s" % statistics.median(v) if v else "     n/a"
    used = sorted({str(r.get("transport_used") or r["transport"]) for r in small})
    print("#   1-byte send, median of %d (transport %s): wall %s" % (len(small), "/".join(used), med("wall_s")))
    for k, what in (("startup_s", "startup (exec -> scanning)"), ("scan_s", "scan (scanning -> found)"),
                    ("connect_s", "connect (found -> connected)"), ("handshake_s", "handshake (connected -> handshake)"),
                    ("transfer_s", "transfer (handshake -> file-done)"), ("close_s", "close (file-done -> done)"),
                    ("exit_s", "exit (last event -> process exit)")):
        print("#     %-36s %s" % (what, med(k)))
PY
exit "$rc"
