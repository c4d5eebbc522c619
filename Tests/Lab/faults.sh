#!/bin/bash
# blesend fault suite: the REAL blesend/blerecv binaries over real BlueZ, in the lab VM, with the
# link, the daemons, the adapters and the disk failing under them, plus a hostile central.
#
# Usage (host):  lab/run-suite.sh -- Tests/Lab/faults.sh [--skip CASE]... [CASE...]
#   (scripts/lab-tests.sh runs it as its own boot). Default: every case, in the order of CASES below;
#   CASE is a function name without "case_", e.g. faults.sh hostile soak; --skip leaves one out
#   (scripts/lab-tests.sh --soak-on: the soak on one image only).
# Runs inside the VM after bt-up.sh (BLESEND_LAB_BT=1): blerecv on hci0, blesend on hci1, ONE
# bluetoothd for both. Every case must end in a byte-identical file, or in a clear error (an
# "error:" line, the documented exit status) with nothing partial in place: no file at the target
# path, and no hidden .NAME.TAG-XXXXXX.blesend-part (or any file at all: files in progress have no name) once the receiver has finished or cleaned up.
# Prints "ok - name" / "not ok - name" with timings, "# soak: ..." figures, then
# "N passed, M failed"; exit status 1 if M > 0, 2 on setup errors.
set -uo pipefail

GROUP=all
SUITE=faults
# shellcheck source=Tests/Lab/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HOSTILE=$ROOT/Tests/Lab/hostile-central.py
SPOOF=$ROOT/Tests/Lab/spoof-signals.py
BONDED=$ROOT/Tests/Lab/bonded-peer.py

MOUNTS=()
suite_cleanup() {
  local m
  for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
}

# Three cuts over L2CAP: each Device1.Disconnect lets up to ~2 s through. 6 MiB (2026-11-26/27)
# was too short once the lab's VM moved at ~375 kB/s on trixie: the third cut (at 4.9 MB) took
# effect after the last byte, no fourth connection came, and the case failed (as it should: the
# fault must strike mid-transfer). 12 MiB again.
mkfile m12.bin $((12 * 1024 * 1024))
# The power cycles and the sender's SIGKILL: long enough to be cut over L2CAP (they strike at
# 256 KiB acknowledged; up to 950 KiB had gone through by then). 8 MiB until 2026-11-26.
mkfile m4.bin $((4 * 1024 * 1024))
# The SIGKILLs at 45 % (issue 23) over GATT: KILL_MIB (4 MiB; 8 until issue 30: at ~45 KB/s over
# GATT under TCG each case then took 190-210 s). A restart costs at most one 256 KiB checkpoint
# interval and the window in flight, 0.031 x of 8 MiB measured, so about 0.06 x of 4 MiB: still
# well inside the 1.10 x bound, and the kill still strikes mid-file. m8.bin: durability_cost.
KILL_MIB=${BLESEND_FAULTS_KILL_MIB:-4}
mkfile kill.bin $((KILL_MIB * 1024 * 1024))
mkfile m8.bin $((8 * 1024 * 1024))
for f in a b c e; do mkfile "m1$f.bin" $((1024 * 1024)); done
mkfile k20.bin $((20 * 1024))
mkfile k24.bin $((24 * 1024))
mkfile k300.bin $((300 * 1024))
# A folder for the receiver killed mid-folder: small files around a 4 MiB one, and an empty folder.
mkdir -p "$W/files/album/sub/deeper" "$W/files/album/empty"
cp "$W/files/k20.bin" "$W/files/album/a.bin"
cp "$W/files/m4.bin" "$W/files/album/big.bin"
cp "$W/files/k24.bin" "$W/files/album/sub/c.bin"
echo "last" > "$W/files/album/sub/deeper/d.txt"

# ---- helpers ----
# temporaries DIR: the hidden partial files in DIR, one per line
temporaries() { find "$1" -maxdepth 1 \( -name '.*.blesend-part' -o -name '.*.blesend-keep*' \) -printf '%f\n' 2>/dev/null; }
no_temporaries() { [ -z "$(temporaries "$1")" ]; }
# outdir NAME: a fresh receiving folder (a case may run more than once per boot: faults.sh hostile hostile)
outdir() { mktemp -d "$W/out-$1.XXXX"; }
has_error_line() { grep -q 'error:' "$1" 2>/dev/null; }
# next_sender_served NAME WHAT OUTDIR: after WHAT ("the bare link"), a trusted sender sends k20.bin
# (send_run NAME-next) and it arrives in OUTDIR.
next_sender_served() {
  send_run "$1-next" --json --to "$RPUB" "$W/files/k20.bin"
  check "blesend after $2: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$3/k20.bin"
}

set_powered() {   # set_powered hciN true|false
  busctl --system set-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Powered b "$2"
}

# cut_link: drops the current hci1 link: Device1.Disconnect, then an HCI LE Disconnect if blesend
# has not noticed within ~1 s (the e2e link-cut technique with a shorter grace: during a transfer
# Device1.Disconnect waits for the sockets to close); the HCI Disconnect is repeated every 4 s, up
# to 3 times, with whatever handle the link has then. Waits until blesend rescans. Sets CUT_HOW.
CUT_HOW=none
rescanned_since() { [ "$(count_event "$SLOG.out" scanning)" -gt "$1" ]; }
cut_link() {
  local before handle try out
  before=$(count_event "$SLOG.out" scanning)
  ( timeout 20 busctl --system call org.bluez "$PEER_DEV" org.bluez.Device1 Disconnect > /dev/null 2>&1 ) &
  PIDS+=("$!")
  for try in $(seq 1 4); do
    rescanned_since "$before" && { CUT_HOW=Device1.Disconnect; return 0; }
    nap 0.2
  done
  CUT_HOW=""
  for try in 1 2 3; do
    handle=$(hcitool -i hci1 con 2>/dev/null | sed -n 's/.*handle \([0-9][0-9]*\).*/\1/p' | head -n 1)
    out=$( [ -n "$handle" ] && hcitool -i hci1 ledc "$handle" 2>&1; echo "rc $?")
    CUT_HOW+="hcitool ledc '$handle' ($(echo $out))"
    wait_until 4 rescanned_since "$before" && return 0
    CUT_HOW+=" no effect after 4 s, links: $(hcitool -i hci1 con | tail -n +2 | tr -s ' \t' ' '); "
  done
  return 1
}

# =====================================================================================
case_readonly() {
  begin "attack: out dir not writable (read-only mount)"
  local ro rrc
  ro=$(outdir ro)
  if mount -t tmpfs -o size=1m,ro tmpfs "$ro"; then MOUNTS+=("$ro"); else fail "cannot mount a read-only tmpfs"; fi
  RECV_LOG=$W/logs/recv-ro
  timeout -k 2 20 "$RECV" --adapter hci0 --trust "$W/trust" --key "$W/keys/receiver" --out "$ro" \
    > "$RECV_LOG.out" 2> "$RECV_LOG.err"
  rrc=$?
  log "blerecv --out (read-only): exit $rrc: $(head -n 2 "$RECV_LOG.err" | tr '\n' ' ')"
  check "blerecv exit $rrc, want $EXIT_LOCAL_IO (local I/O) at start" [ "$rrc" = "$EXIT_LOCAL_IO" ]
  check "no 'error:' line" has_error_line "$RECV_LOG.err"
  check "the error does not say 'not writable'" grep -q 'not writable' "$RECV_LOG.err"

  # The folder turns read-only while blerecv runs: the file is refused, nothing lands.
  local rw
  rw=$(outdir rw)
  if mount -t tmpfs -o size=1m tmpfs "$rw"; then MOUNTS+=("$rw"); else fail "cannot mount a tmpfs"; fi
  start_recv ro-later "$rw" -v || fail "receiver did not start"
  mount -o remount,ro "$rw" || fail "remount,ro failed"
  send_run ro-later --to "$RPUB" "$W/files/k20.bin"
  check "blesend exit $SRC, want $EXIT_FILE_REJECTED (refused by the receiver)" [ "$SRC" = "$EXIT_FILE_REJECTED" ]
  check "blesend: no 'error:' line" has_error_line "$SLOG.err"
  check "receiver did not report the failure" has_error_line "$RECV_LOG.err"
  check "a file appeared in the read-only folder" [ -z "$(ls -A "$rw")" ]
  check "receiver died after refusing the file" kill -0 "$RECV_PID"
  mount -o remount,rw "$rw" || fail "remount,rw failed"
  stop_recv; rrc=$WRC
  log "blerecv (file refused earlier): exit $rrc after SIGTERM"
  check "folder not empty after the receiver stopped: $(ls -A "$rw" | tr '\n' ' ')" [ -z "$(ls -A "$rw")" ]
  end "$RECV_LOG.err" "$SLOG.err"
}

case_disk_full() {
  begin "attack: disk full during receive (tmpfs)"
  local full rrc
  full=$(outdir full)
  if mount -t tmpfs -o size=256k tmpfs "$full"; then MOUNTS+=("$full"); else fail "cannot mount a 256k tmpfs"; fi
  # (a) a 1 MiB file with its size in the offer: refused before a byte is written (blerecv --once:
  #     its exit status reports the failure)
  start_recv full-once "$full" --once -v || fail "receiver did not start"
  local once_pid=$RECV_PID
  send_run full-offer --to "$RPUB" "$W/files/m1a.bin"
  log "1 MiB offer into 256k: blesend exit $SRC: $(grep -m1 'error:' "$SLOG.err")"
  check "offer: blesend exit $SRC, want $EXIT_FILE_REJECTED" [ "$SRC" = "$EXIT_FILE_REJECTED" ]
  check "offer: blesend has no 'error:' line" has_error_line "$SLOG.err"
  wait_pid "$once_pid" 20; rrc=$WRC; RECV_PID=""
  log "blerecv --once after the refused offer: exit $rrc ($(grep -m1 'error:' "$RECV_LOG.err"))"
  check "offer: blerecv --once exit $rrc, want $EXIT_LOCAL_IO (local I/O)" [ "$rrc" = "$EXIT_LOCAL_IO" ]
  check "offer: blerecv has no 'error:' line" has_error_line "$RECV_LOG.err"
  check "offer: m1a.bin exists in the full folder" absent "$full/m1a.bin"
  check "offer: temporaries left: $(temporaries "$full" | tr '\n' ' ')" no_temporaries "$full"
  start_recv full "$full" -v || fail "receiver did not start"
  # (b) a stream of unknown size: the disk fills mid-file (ENOSPC on write)
  send_run full-stream --to "$RPUB" - --name stream.bin < "$W/files/m1a.bin"
  log "1 MiB stream into 256k: blesend exit $SRC: $(grep -m1 'error:' "$SLOG.err")"
  check "stream: blesend exit $SRC, want $EXIT_FILE_REJECTED" [ "$SRC" = "$EXIT_FILE_REJECTED" ]
  check "stream: blesend has no 'error:' line" has_error_line "$SLOG.err"
  check "stream: stream.bin exists in the full folder" absent "$full/stream.bin"
  check "stream: temporaries left: $(temporaries "$full" | tr '\n' ' ')" no_temporaries "$full"
  check "receiver did not log the failure" has_error_line "$RECV_LOG.err"
  check "receiver died after a full disk" kill -0 "$RECV_PID"
  # (c) it keeps serving: a small file fits
  send_run full-small --to "$RPUB" "$W/files/k20.bin"
  check "small file after: blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$full/k20.bin"
  stop_recv; rrc=$WRC
  log "blerecv after two failed files: exit $rrc ($(grep -m1 'error:' "$RECV_LOG.err"))"
  check "folder holds more than k20.bin: $(ls -A "$full" | tr '\n' ' ')" [ "$(ls -A "$full")" = k20.bin ]
  end "$RECV_LOG.err" "$SLOG.err"
}

case_three_cuts() {
  begin "fault: link dropped 3 times in one transfer, file identical"
  local out k cuts=0 hows=""
  out=$(outdir cuts)
  start_recv cuts "$out" -v || fail "receiver did not start"
  send_bg cuts --json --to "$RPUB" "$W/files/m12.bin"
  local mark=0 offset
  for k in 1 2 3; do
    # the k-th connection is up and has moved 64 KiB past where it resumed (the cut itself lets
    # ~1 s of data through: Device1.Disconnect waits for the sockets to close, then the HCI fallback;
    # the sender's acknowledged count also lags the receiver by up to a window)
    wait_count "$SLOG.out" connected "$k" 60 || { fail "connection $k never came up"; break; }
    offset=0
    if [ "$k" -gt 1 ]; then
      wait_count "$SLOG.out" resumed $((k - 1)) 30 || { fail "connection $k did not resume"; break; }
      offset=$(events "$SLOG.out" last resumed offset)
    fi
    mark=$(( ${offset:-0} + 64 * 1024 ))
    wait_progress "$SLOG.out" "$mark" 60 "$SPID" || { fail "cut $k: progress never reached $mark bytes"; break; }
    log "cut $k at $(max_progress "$SLOG.out") acknowledged bytes"
    cut_link && cuts=$((cuts + 1))
    hows+="$CUT_HOW; "
  done
  finish_send 150
  log "cuts: $hows resumed at: $(events "$SLOG.out" all resumed offset | tr '\n' ' ')"
  check "cut the link $cuts times, want 3 ($hows)" [ "$cuts" = 3 ]
  check "blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "m12.bin differs or missing" same "$W/files/m12.bin" "$out/m12.bin"
  check "connections over '$(transports "$SLOG.out")', want l2cap each time (L2CAP failed: $(fallbacks "$SLOG.out"))" all_l2cap "$SLOG.out"
  check "want 4+ connected events, got $(count_event "$SLOG.out" connected)" [ "$(count_event "$SLOG.out" connected)" -ge 4 ]
  check "want 3+ resumed events, got $(count_event "$SLOG.out" resumed)" [ "$(count_event "$SLOG.out" resumed)" -ge 3 ]
  check "stdout has a line that is not JSON" valid_json "$SLOG.out"
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  stop_recv
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

# ratio_ok BYTES SIZE: BYTES is at most 1.10 x SIZE
ratio_ok() { [ "$(( $1 * 100 ))" -le "$(( $2 * 110 ))" ]; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# Issue 23: KILL_MIB over GATT, blerecv SIGKILLed at 45 % and started again at once. Its partial file
# (synced every 256 KiB) is found at start; blesend, still running, reconnects and resumes: the
# file arrives identical and blesend's file data on the air is at most 1.10 x the file.
case_receiver_killed() {
  begin "fault: receiver SIGKILLed at 45 % of $KILL_MIB MiB over GATT, started again at once: blesend finishes by itself, identical, <= 1.10 x on the air"
  local out size=$((KILL_MIB * 1024 * 1024)) air at
  out=$(outdir rkill)
  start_recv rkill "$out" -v || fail "receiver did not start"
  send_bg rkill --json --no-compress --transport gatt --to "$RPUB" "$W/files/kill.bin"
  wait_progress "$SLOG.out" $((size * 45 / 100)) 120 "$SPID" || fail "no progress to 45 % before the kill"
  kill -9 "$RECV_PID"; wait "$RECV_PID" 2>/dev/null
  RECV_PID=""
  at=$(max_progress "$SLOG.out")
  log "blerecv SIGKILLed at $at bytes acknowledged; out dir: $(ls -A "$out" | tr '\n' ' ')"
  check "kill.bin appeared at the target path after the kill" absent "$out/kill.bin"
  "$RECV" partials --key "$W/keys/receiver" --out "$out" --trust "$W/trust" --json > "$W/logs/partials.out" 2> "$W/logs/partials.err"
  log "blerecv partials: $(cat "$W/logs/partials.out" "$W/logs/partials.err")"
  check "blerecv partials does not list kill.bin from the trusted sender" grep -q '"event":"partial",.*"name":"kill.bin".*"peer":"sender"' "$W/logs/partials.out"
  start_recv rkill2 "$out" -v || fail "receiver did not restart"
  check "the restarted blerecv did not take up the partial file" grep -q "1 partial file(s) or folder(s) of an earlier run kept" "$RECV_LOG.err"
  finish_send 180
  check "blesend exit $SRC, want $EXIT_SUCCESS (it reconnects to the restarted receiver by itself)" [ "$SRC" = "$EXIT_SUCCESS" ]
  air=$(json_get "$SLOG.out" done air_bytes)
  log "killed at $at; resumed at $(json_get "$SLOG.out" resumed offset); air bytes ${air:-?} for $size: $(ratio "${air:-0}" "$size") x"
  echo "# METRIC receiver_killed_air_ratio=$(ratio "${air:-0}" "$size")"
  check "air bytes ${air:-none} above 1.10 x $size" ratio_ok "${air:-999999999}" "$size"
  check "kill.bin differs or missing" same "$W/files/kill.bin" "$out/kill.bin"
  stop_recv
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

# big_resumed FILE: where blesend's --json log FILE says album/big.bin resumed ("" if it did not)
big_resumed() { grep '"event":"resumed"' "$1" | grep '"album/big.bin"' | grep -o '"offset":[0-9]*' | head -n 1 | grep -o '[0-9]*$'; }

# Issue 23: a folder (4 MiB among small files, over L2CAP), blerecv SIGKILLed at 45 % of its big
# file and started again at once: it takes the hidden folder up from its journal, blesend (still
# running) resumes the big file from its last checkpoint and finishes the rest; the folder arrives
# identical, and nothing hidden is left.
case_receiver_killed_folder() {
  begin "fault: receiver SIGKILLed mid-folder, started again at once: blesend finishes it by itself, identical"
  local out size=$((4 * 1024 * 1024)) resumed
  out=$(outdir rkillf)
  start_recv rkillf "$out" -v || fail "receiver did not start"
  send_bg rkillf --json --no-compress --to "$RPUB" "$W/files/album"
  wait_progress "$SLOG.out" $((size * 45 / 100)) 120 "$SPID" || fail "no progress to 45 % of big.bin before the kill"
  kill -9 "$RECV_PID"; wait "$RECV_PID" 2>/dev/null
  RECV_PID=""
  log "blerecv SIGKILLed at $(max_progress "$SLOG.out") bytes acknowledged; out dir: $(ls -A "$out" | tr '\n' ' ')"
  check "album appeared at the target path after the kill" absent "$out/album"
  start_recv rkillf2 "$out" -v || fail "receiver did not restart"
  check "the restarted blerecv did not take up the folder" grep -q "1 partial file(s) or folder(s) of an earlier run kept" "$RECV_LOG.err"
  finish_send 180
  check "blesend exit $SRC, want $EXIT_SUCCESS (it reconnects to the restarted receiver by itself)" [ "$SRC" = "$EXIT_SUCCESS" ]
  resumed=$(big_resumed "$SLOG.out")
  log "resumed big.bin at ${resumed:-?} of $size"
  check "big.bin was not resumed from a checkpoint (resumed at ${resumed:-none})" [ "${resumed:-0}" -ge 262144 ]
  check "album differs or missing: $(diff -r "$W/files/album" "$out/album" 2>&1 | head -3)" diff -r "$W/files/album" "$out/album"
  stop_recv
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

# Issue 23: the same folder with blesend SIGKILLed at 45 % of its big file and run again 3 s
# later: blesend keeps the folder's tree id in its state folder, so the run again is answered from
# what blerecv holds: the finished files are confirmed, big.bin resumes, the rest follows.
case_sender_killed_folder() {
  begin "fault: sender SIGKILLed mid-folder, run again 3 s later: it resumes the folder, identical"
  local out size=$((4 * 1024 * 1024)) resumed
  out=$(outdir skillf)
  start_recv skillf "$out" -v || fail "receiver did not start"
  send_bg skillf --json --no-compress --to "$RPUB" "$W/files/album"
  wait_progress "$SLOG.out" $((size * 45 / 100)) 120 "$SPID" || fail "no progress to 45 % of big.bin before the kill"
  kill -9 "$SPID"; wait "$SPID" 2>/dev/null
  log "blesend SIGKILLed at $(max_progress "$SLOG.out") bytes acknowledged; out dir: $(ls -A "$out" | tr '\n' ' ')"
  sleep 3
  send_run skillf-next --json --no-compress --to "$RPUB" "$W/files/album"
  check "next blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  resumed=$(big_resumed "$SLOG.out")
  log "the new run resumed big.bin at ${resumed:-?} of $size"
  check "the new run did not resume big.bin from what blerecv held (resumed at ${resumed:-none})" [ "${resumed:-0}" -ge 262144 ]
  check "album differs or missing: $(diff -r "$W/files/album" "$out/album" 2>&1 | head -3)" diff -r "$W/files/album" "$out/album"
  check "a second copy of the folder: $(ls -A "$out" | tr '\n' ' ')" absent "$out/album-1"
  stop_recv
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

# Issue 23: the same with blesend SIGKILLed at 45 % and run again. The receiver notices the dead
# sender and keeps its partial; the new run offers the file under the same transfer id (kept in
# blesend's state folder) and resumes. What the killed run sent is at most what the receiver held
# when the new run resumed plus one transfer window (256 KiB), so the link carried at most
# resumed + 256 KiB + the new run's air bytes.
case_sender_killed() {
  begin "fault: sender SIGKILLed at 45 % of $KILL_MIB MiB over GATT, run again: it resumes, identical, <= 1.10 x on the air"
  local out t_kill noticed="" size=$((KILL_MIB * 1024 * 1024)) resumed air bound
  out=$(outdir skill)
  start_recv skill "$out" -v || fail "receiver did not start"
  send_bg skill --json --no-compress --transport gatt --to "$RPUB" "$W/files/kill.bin"
  wait_progress "$SLOG.out" $((size * 45 / 100)) 120 "$SPID" || fail "no progress to 45 % before the kill"
  local ends_before; ends_before=$(grep -c 'connection ended\|link lost' "$RECV_LOG.err")
  kill -9 "$SPID"; wait "$SPID" 2>/dev/null
  t_kill=$(now)
  log "blesend SIGKILLed at $(max_progress "$SLOG.out") bytes; out dir: $(ls -A "$out" | tr '\n' ' ')"
  check "kill.bin appeared at the target path" absent "$out/kill.bin"
  # How soon does the receiver notice? (Its idle timeout is 30 s; the ARQ gives up after 20 s.)
  if wait_lines "$RECV_LOG.err" 'connection ended|link lost' $((ends_before + 1)) 45; then
    noticed=$(elapsed "$t_kill")
  fi
  log "receiver noticed the dead sender after ${noticed:-more than 45 }s; temporaries meanwhile: $(temporaries "$out" | wc -l)"
  echo "# METRIC sender_kill_noticed_s=${noticed:-none}"
  check "receiver did not notice the dead sender within 45 s" [ -n "$noticed" ]
  send_run skill-next --json --no-compress --transport gatt --to "$RPUB" "$W/files/kill.bin"
  check "next blesend exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  resumed=$(json_get "$SLOG.out" resumed offset); air=$(json_get "$SLOG.out" done air_bytes)
  bound=$(( ${resumed:-0} + 262144 + ${air:-$size} ))
  log "the new run resumed at ${resumed:-0}, sent ${air:-?}: the link carried at most $bound for $size: $(ratio "$bound" "$size") x"
  echo "# METRIC sender_killed_air_ratio_bound=$(ratio "$bound" "$size")"
  check "the new run did not resume (no resumed event)" [ -n "$resumed" ]
  check "at most $bound bytes on the air, above 1.10 x $size" ratio_ok "$bound" "$size"
  check "kill.bin differs or missing" same "$W/files/kill.bin" "$out/kill.bin"
  check "more than kill.bin in the folder: $(ls -A "$out" | tr '\n' ' ')" [ "$(ls -A "$out")" = kill.bin ]
  # The history of both tools tells what happened: sent and received, resumed, the same BLAKE2b.
  "$SEND" history --json --since 10m > "$W/logs/history-sent.out" 2>&1
  "$RECV" history --json --since 10m > "$W/logs/history-received.out" 2>&1
  local sent_hash received_hash
  sent_hash=$(grep "\"path\":\"$W/files/kill.bin\"" "$W/logs/history-sent.out" | grep '"result":"saved","resumed":true' | grep -o '"blake2b":"[0-9a-f]*"' | tail -n 1)
  received_hash=$(grep "\"path\":\"$out/kill.bin\"" "$W/logs/history-received.out" | grep '"result":"saved"' | grep -o '"blake2b":"[0-9a-f]*"' | tail -n 1)
  log "history: sent $(tail -n 1 "$W/logs/history-sent.out"); received $(tail -n 1 "$W/logs/history-received.out")"
  check "blesend history has no resumed, saved kill.bin with a hash" [ -n "$sent_hash" ]
  check "blerecv history has no saved kill.bin with the same hash as blesend's" [ -n "$received_hash" -a "$sent_hash" = "$received_hash" ]
  stop_recv
  check "temporaries left after the receiver stopped: $(temporaries "$out")" no_temporaries "$out"
  end "$SLOG.err" "$RECV_LOG.err"
}

# On demand (not in CASES; faults.sh durability_cost): the cost of durable partials. 8 MiB over
# L2CAP (the fastest transport: the syncs weigh most there), blerecv with its default
# --keep-partials (synced every 256 KiB) and with --keep-partials 0 (nameless, never synced),
# ROUNDS times each in alternating order, in one boot; goodput from blesend's file-done seconds.
case_durability_cost() {
  begin "benchmark: goodput with durable partials vs without (8 MiB over L2CAP, ${COST_ROUNDS:-3} rounds each, one boot)"
  local size=$((8 * 1024 * 1024)) round mode out secs durable=() memory=()
  for round in $(seq 1 "${COST_ROUNDS:-3}"); do
    for mode in $([ $((round % 2)) = 1 ] && echo "durable memory" || echo "memory durable"); do
      out=$(outdir "cost-$mode")
      if [ "$mode" = durable ]; then start_recv "cost-$mode" "$out" || fail "receiver did not start"
      else start_recv "cost-$mode" "$out" --keep-partials 0 || fail "receiver did not start"; fi
      send_run "cost-$mode-$round" --json --no-compress --to "$RPUB" "$W/files/m8.bin"
      secs=$(json_get "$SLOG.out" file-done seconds)
      check "$mode round $round: blesend exit $SRC" [ "$SRC" = "$EXIT_SUCCESS" ]
      check "$mode round $round: m8.bin differs" same "$W/files/m8.bin" "$out/m8.bin"
      stop_recv
      log "$mode round $round: $(goodput "$size" "${secs:-0}") KiB/s (${secs}s)"
      if [ "$mode" = durable ]; then durable+=("${secs:-0}"); else memory+=("${secs:-0}"); fi
    done
  done
  local md mm ratio
  md=$(printf '%s\n' "${durable[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  mm=$(printf '%s\n' "${memory[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  ratio=$(awk -v d="$md" -v m="$mm" 'BEGIN { printf "%.3f", m / d }')
  log "median seconds: durable $md (${durable[*]}), without $mm (${memory[*]}): goodput ratio durable / without = $ratio"
  echo "# METRIC durability_goodput_ratio=$ratio"
  check "goodput with durable partials is $ratio x that without (want >= 0.97)" awk -v r="$ratio" 'BEGIN { exit !(r >= 0.97) }'
  end "$SLOG.err"
}

# power_cycle_case NAME hciN FILE: a transfer while hciN is powered off for 2 s
power_cycle() {
  local name=$1 hci=$2 file=$3 out
  out=$(outdir "$1")
  start_recv "$name" "$out" -v || fail "receiver did not start"
  send_bg "$name" --json --to "$RPUB" "$W/files/$file"
  wait_progress "$SLOG.out" $((256 * 1024)) 60 "$SPID" || fail "no progress before the power cycle"
  log "$hci off at $(max_progress "$SLOG.out") bytes"
  if [ "$hci" = hci0 ]; then
    # Two btvirt gaps (lab/README.md): a powered-off btvirt controller still advertises and accepts
    # connections (the host never learns of them, and the reset at power-on drops them without
    # telling the central, which then stays connected for good: no supervision timeout), and the
    # power-off Disconnect does not reliably reach hci1. So: pause the sender (quiet link), end the
    # link from hci0 as the kernel should at power-off (HCI Disconnect, reason 0x15), power-cycle
    # hci0, and let the sender go on only once hci0 is back. The transfer is still half done.
    kill -STOP "$SPID"
    sleep 1
    local handle i
    handle=$(hcitool -i hci0 con 2>/dev/null | sed -n 's/.*handle \([0-9][0-9]*\).*/\1/p' | head -n 1)
    [ -n "$handle" ] && hcitool -i hci0 ledc "$handle" 0x15 > /dev/null 2>&1
    for i in $(seq 1 30); do [ -z "$(hcitool -i hci1 con | tail -n +2)" ] && break; nap 0.1; done
    log "hci0 ended its link (handle $handle); hci1 links now: $(hcitool -i hci1 con | tail -n +2 | tr -s ' \t' ' ')"
  fi
  set_powered "$hci" false || fail "could not power $hci off"
  sleep 2
  set_powered "$hci" true || fail "could not power $hci on"
  wait_powered "$hci" 15 || fail "$hci not powered again"
  if [ "$hci" = hci0 ]; then
    wait_lines "$RECV_LOG.err" 'powered on again; advertising' 1 10 || fail "blerecv did not say it advertises again"
    kill -CONT "$SPID"
  fi
  log "$hci on again"
  finish_send 150
  if [ "$SRC" = "$EXIT_SUCCESS" ]; then
    check "$file differs or missing" same "$W/files/$file" "$out/$file"
    check "no resumed event" has_event "$SLOG.out" resumed
  else
    fail "blesend exit $SRC, want $EXIT_SUCCESS (it should reconnect and resume)"
    check "blesend: no 'error:' line" has_error_line "$SLOG.err"
    check "$file at the target path after a failure" absent "$out/$file"
  fi
  check "receiver died" kill -0 "$RECV_PID"
  # blesend does not wait for bluetoothd's Disconnect (it ends the link 2 s later): allow 5 s.
  wait_until 5 no_links hci1
  check "hci1 still holds a link to hci0 that hci0 no longer has: $(hcitool -i hci1 con | tail -n +2)" no_links hci1
  # The receiver still serves (it advertises again after the power cycle).
  send_run "$name-after" --to "$RPUB" "$W/files/k20.bin"
  check "a send after the power cycle: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$out/k20.bin"
  stop_recv
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
}

case_sender_power() {
  begin "fault: sender adapter powered off and on mid-transfer"
  power_cycle spower hci1 m4.bin   # over L2CAP 1 MiB can finish before the power-off takes effect
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

case_receiver_power() {
  begin "fault: receiver adapter powered off and on mid-transfer"
  power_cycle rpower hci0 m4.bin   # 1 MiB was all through before the power-off on 5.82/6.12 (trixie)
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

case_bluetoothd_restart() {
  begin "fault: bluetoothd restarted mid-transfer"
  local out; out=$(outdir btd)
  start_recv btd "$out" -v || fail "receiver did not start"
  send_bg btd --json --to "$RPUB" "$W/files/m1a.bin"
  wait_progress "$SLOG.out" $((256 * 1024)) 60 "$SPID" || fail "no progress before the restart"
  log "restarting bluetoothd at $(max_progress "$SLOG.out") bytes"
  restart_bluetoothd || fail "bluetoothd did not come back"
  finish_send 150
  if [ "$SRC" = "$EXIT_SUCCESS" ]; then
    check "m1a.bin differs or missing" same "$W/files/m1a.bin" "$out/m1a.bin"
  else
    fail "blesend exit $SRC, want $EXIT_SUCCESS (it should reconnect and resume once bluetoothd is back)"
    check "blesend: no 'error:' line" has_error_line "$SLOG.err"
    check "m1a.bin at the target path after a failure" absent "$out/m1a.bin"
  fi
  if kill -0 "$RECV_PID" 2>/dev/null; then
    check "receiver did not register again after the restart" grep -q 'registered again' "$RECV_LOG.err"
    send_run btd-after --to "$RPUB" "$W/files/k24.bin"
    check "a send after the restart: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
    check "k24.bin differs or missing" same "$W/files/k24.bin" "$out/k24.bin"
    stop_recv
  else
    fail "receiver exited after the restart"
    RECV_PID=""
  fi
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  end "$SLOG.err" "$SLOG.out" "$RECV_LOG.err"
}

# Issue 23: the replay guard survives a SIGKILL. A message 1 of the trusted sender, made for this
# receiver a moment before (as if recorded off the air), is written by a stranger and answered;
# blerecv is SIGKILLed and started again with the same state directory; the same message 1 is
# now a replay, refused; a real send still gets through.
case_replay_after_restart() {
  begin "attack: a message 1 recorded before blerecv was SIGKILLed is refused after its restart"
  local out state=$W/state-replay frames=$W/message1-replay.hex
  out=$(outdir replay)
  "$LABCHECK" message1 "$W/keys/sender" "$RPUB" "$W/files/k20.bin" > "$frames" || fail "blesend-labcheck message1 failed"
  start_recv replay "$out" -v --state "$state" || fail "receiver did not start"
  timeout -k 2 30 /usr/bin/python3 "$HOSTILE" --mode replay --frames "$frames" --adapter hci1 --hold 4 \
    > "$W/logs/replay-1.out" 2> "$W/logs/replay-1.err"
  check "the first write of the recorded message 1 was not answered as sender's" grep -q 'sender connected \[' "$RECV_LOG.err"
  check "no replay journal in $state: $(ls -A "$state" 2>/dev/null | tr '\n' ' ')" bash -c "ls '$state' | grep -q '^replay-'"
  kill -9 "$RECV_PID"; wait "$RECV_PID" 2>/dev/null; RECV_PID=""
  sleep 2
  start_recv replay-again "$out" -v --state "$state" || fail "receiver did not start again"
  check "the restarted receiver does not say it remembers one sender key" grep -q 'replay guard: 1 sender key' "$RECV_LOG.err"
  timeout -k 2 30 /usr/bin/python3 "$HOSTILE" --mode replay --frames "$frames" --adapter hci1 --hold 4 \
    > "$W/logs/replay-2.out" 2> "$W/logs/replay-2.err"
  check "the replay after the restart was not refused as one" grep -q 'refused a replayed handshake claiming to be sender' "$RECV_LOG.err"
  check "the replay after the restart was answered" lacks "$RECV_LOG.err" 'sender connected \['
  next_sender_served replay "the replays" "$out"
  stop_recv
  end "$W/logs/replay-1.out" "$W/logs/replay-2.out" "$SLOG.err" "$RECV_LOG.err"
}

# A central that writes the start of handshake message 1 (and garbage), never subscribes to
# notifications, never finishes, and holds the link (Tests/Lab/hostile-central.py). Both use hci1,
# so blesend could not connect while it holds the link: it holds until blerecv drops it.
case_hostile() {
  begin "attack: half handshake holds the link, next sender served"
  local out hrc t
  out=$(outdir hostile)
  start_recv hostile "$out" -v || fail "receiver did not start"
  t=$(now)
  timeout -k 2 90 /usr/bin/python3 "$HOSTILE" --adapter hci1 --hold 60 > "$W/logs/hostile.out" 2> "$W/logs/hostile.err"
  hrc=$?
  log "hostile central: exit $hrc after $(elapsed "$t")s: $(tr '\n' ' ' < "$W/logs/hostile.out")"
  local after; after=$(json_get "$W/logs/hostile.out" dropped after_s)
  echo "# METRIC hostile_dropped_after_s=${after:-none}"
  check "hostile central exit $hrc, want 0 (the receiver dropped it)" [ "$hrc" = 0 ]
  check "receiver did not log the handshake timeout" grep -q 'connection ended: handshakeTimeout' "$RECV_LOG.err"
  check "the receiver took ${after:-?} s to drop the hostile central (want < 20: 10 s handshake timeout + BlueZ's 2 s disconnect timer)" \
    awk -v a="${after:-99}" 'BEGIN { exit !(a < 20) }' 
  check "receiver died" kill -0 "$RECV_PID"
  send_run hostile-next --json --to "$RPUB" "$W/files/k300.bin"
  check "blesend after the hostile central: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k300.bin differs or missing" same "$W/files/k300.bin" "$out/k300.bin"
  check "something else in the folder: $(ls -A "$out" | tr '\n' ' ')" [ "$(ls -A "$out")" = k300.bin ]
  stop_recv
  end "$W/logs/hostile.out" "$W/logs/hostile.err" "$SLOG.err" "$RECV_LOG.err"
}

# A stranger that connects (services resolved) and touches nothing of the transfer service (issue 22:
# one tap on "connect" in a phone's BLE scanner app): a bare LE link, which once held blerecv for
# good. The admission policy disconnects a link that opens no transfer channel within 8 s.
case_bare() {
  begin "attack: a bare LE link is disconnected, next sender served"
  local out hrc t after
  out=$(outdir bare)
  start_recv bare "$out" -v || fail "receiver did not start"
  t=$(now)
  timeout -k 2 60 /usr/bin/python3 "$HOSTILE" --mode bare --adapter hci1 --hold 40 > "$W/logs/bare.out" 2> "$W/logs/bare.err"
  hrc=$?
  log "bare link: exit $hrc after $(elapsed "$t")s: $(tr '\n' ' ' < "$W/logs/bare.out")"
  after=$(json_get "$W/logs/bare.out" dropped after_s)
  echo "# METRIC bare_link_dropped_after_s=${after:-none}"
  check "bare link: exit $hrc, want 0 (the receiver disconnected it)" [ "$hrc" = 0 ]
  check "receiver did not log the bare link's disconnection" grep -q 'admission: ending the link of .*bareLink' "$RECV_LOG.err"
  # (after_s counts from when its services were resolved, a little after the link came up)
  check "disconnected ${after:-?} s after connecting, want under 13 (8 s bare-link limit + BlueZ's 2 s disconnect timer)" \
    awk -v a="${after:-99}" 'BEGIN { exit !(a < 13) }'
  next_sender_served bare "the bare link" "$out"
  check "receiver died" kill -0 "$RECV_PID"
  stop_recv
  end "$W/logs/bare.out" "$W/logs/bare.err" "$SLOG.err" "$RECV_LOG.err"
}

# A stranger that connects, subscribes to the transfer characteristic and sends nothing (issue 20:
# bluetoothd 5.66 went away when blerecv re-registered its GATT application under that live
# subscriber). blerecv must drop the link, leave bluetoothd running, and serve the next sender.
# registered_under_link MONITORLOG: how many RegisterApplication calls a dbus-monitor log shows while
# the watched device was Connected (its PropertiesChanged: "Connected" then "boolean true/false").
registered_under_link() {
  awk '/member=RegisterApplication/ { if (up) n++ }
       /string "Connected"/ { getline; if ($0 ~ /boolean true/) up = 1; else if ($0 ~ /boolean false/) up = 0 }
       END { print n + 0 }' "$1"
}
case_silent_subscriber() {
  local mode
  # subscribe-only is what issue 20's review did (bleak: subscribed, nothing else); hold-write
  # also holds the write socket.
  for mode in subscribe-only hold-write; do silent_subscriber "$mode"; done
}
silent_subscriber() {
  begin "attack: a subscribed silent stranger ($1) is dropped, bluetoothd stays up, next sender served"
  local mode=$1 out hrc t bpid_before bpid_after
  out=$(outdir silent)
  start_recv silent "$out" -v || fail "receiver did not start"
  bpid_before=$(pidof bluetoothd)
  # The review's trigger: blerecv registered its GATT application again while the stranger's link
  # was still up. Watch for that on the bus: RegisterApplication calls and hci0's view of the
  # stranger's Connected property, in order.
  local mon=$W/logs/silent-$mode.bus
  dbus-monitor --system "type='method_call',interface='org.bluez.GattManager1',member='RegisterApplication'" \
    "type='signal',interface='org.freedesktop.DBus.Properties',path='/org/bluez/hci0/dev_00_AA_01_01_00_01',arg0='org.bluez.Device1'" \
    > "$mon" 2>&1 &
  local mpid=$!
  sleep 1
  t=$(now)
  timeout -k 2 60 /usr/bin/python3 "$HOSTILE" --adapter hci1 --mode "$mode" --notify --hold 40 \
    > "$W/logs/silent.out" 2> "$W/logs/silent.err"
  hrc=$?
  log "silent subscriber ($mode): exit $hrc after $(elapsed "$t")s: $(tr '\n' ' ' < "$W/logs/silent.out")"
  sleep 3   # whatever blerecv does after dropping it (it once re-registered its application here)
  kill "$mpid" 2>/dev/null; wait "$mpid" 2>/dev/null
  bpid_after=$(pidof bluetoothd)
  log "RegisterApplication calls: $(grep -c 'member=RegisterApplication' "$mon"), while the stranger's link was up: $(registered_under_link "$mon")"
  check "blerecv registered its application again while the stranger's link was up" [ "$(registered_under_link "$mon")" = 0 ]
  check "bluetoothd changed from '$bpid_before' to '$bpid_after' (it crashed or was restarted)" \
    [ -n "$bpid_after" ] && [ "$bpid_before" = "$bpid_after" ]
  check "silent subscriber exit $hrc, want 0 (the receiver dropped it)" [ "$hrc" = 0 ]
  check "receiver died" kill -0 "$RECV_PID"
  check "receiver saw bluetoothd go away" lacks "$RECV_LOG.err" 'bluetoothd went away'
  next_sender_served silent "the silent subscriber" "$out"
  check "a raw D-Bus error reached the user" lacks "$SLOG.err" 'D-Bus error'
  stop_recv
  end "$W/logs/silent.out" "$W/logs/silent.err" "$SLOG.err" "$RECV_LOG.err"
}

# A sender SIGKILLed during a GATT transfer, run again 3 s later (issue 20): the dead process's link
# is still up; the next run must get through (or say what happened), never print a raw D-Bus error.
case_sender_killed_rerun() {
  begin "fault: sender SIGKILLed over GATT, run again 3 s later: the file arrives, no raw D-Bus error"
  local out
  out=$(outdir krerun)
  start_recv krerun "$out" -v || fail "receiver did not start"
  send_bg krerun --json --transport gatt --to "$RPUB" "$W/files/m1a.bin"
  wait_progress "$SLOG.out" $((64 * 1024)) 60 "$SPID" || fail "no progress before the kill"
  kill -9 "$SPID"; wait "$SPID" 2>/dev/null
  sleep 3
  send_run krerun-next --json -v --transport gatt --to "$RPUB" "$W/files/m1a.bin"
  log "rerun: exit $SRC after ${SEND_SECS}s: $(grep -m1 'error:' "$SLOG.err")"
  echo "# METRIC killed_rerun_s=$SEND_SECS"
  check "rerun exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "a raw D-Bus error reached the user" lacks "$SLOG.err" 'D-Bus error'
  check "m1a.bin differs or missing" same "$W/files/m1a.bin" "$out/m1a.bin"
  stop_recv
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  end "$SLOG.err" "$RECV_LOG.err"
}

# A zero-length Write Command (issue 9, defect 10): an empty datagram on blerecv's write socket is a
# malformed frame, counted and dropped like a bad CRC; it is not the end of the socket. The hostile
# central writes the start of handshake message 1, then an empty value, and holds the link: the
# session must go on until blerecv's 10 s handshake timeout ends it, not end as "link lost" at once.
case_empty_write() {
  begin "attack: zero-length write is dropped, the session goes on until the handshake timeout"
  local out hrc t after
  out=$(outdir empty)
  start_recv empty "$out" -v || fail "receiver did not start"
  t=$(now)
  timeout -k 2 60 /usr/bin/python3 "$HOSTILE" --mode empty-write --adapter hci1 --hold 25 \
    > "$W/logs/empty.out" 2> "$W/logs/empty.err"
  hrc=$?
  log "hostile central (empty write): exit $hrc after $(elapsed "$t")s: $(tr '\n' ' ' < "$W/logs/empty.out")"
  after=$(json_get "$W/logs/empty.out" dropped after_s)
  echo "# METRIC empty_write_dropped_after_s=${after:-none}"
  check "the hostile central did not write its values" events "$W/logs/empty.out" has wrote
  check "receiver took the empty value for the end of the link ('connection ended: link lost')" \
    lacks "$RECV_LOG.err" 'connection ended: link lost'
  check "receiver did not end the connection with its handshake timeout" grep -q 'connection ended: handshakeTimeout' "$RECV_LOG.err"
  check "hostile central exit $hrc, want 0 (the receiver dropped it)" [ "$hrc" = 0 ]
  # The handshake deadline counts from the link (admission rule 3), which came up a second or two
  # before the write: dropped a little under 10 s after it, not at once.
  check "dropped ${after:-?} s after the empty write, want 5 to 20 (10 s handshake deadline from the link + BlueZ's 2 s disconnect timer)" \
    awk -v a="${after:-0}" 'BEGIN { exit !(a >= 5 && a < 20) }'
  check "receiver died" kill -0 "$RECV_PID"
  check "something in the folder: $(ls -A "$out" | tr '\n' ' ')" [ -z "$(ls -A "$out")" ]
  stop_recv
  end "$W/logs/empty.out" "$W/logs/empty.err" "$RECV_LOG.err"
}

# Another program on the sender's machine holds the receiver characteristic's write socket (a helper
# on hci1 called AcquireWrite and keeps the fd; issue 9, defect 6). bluetoothd then refuses blesend's
# AcquireWrite (and WriteValue): blesend must name that cause and exit EXIT_BLUETOOTH_UNAVAILABLE at once, not reconnect and
# report a dropping link; the receiver gets nothing, and serves the next sender once the socket is free.
case_busy() {
  begin "fault: another local program holds the write socket: --transport gatt exits $EXIT_BLUETOOTH_UNAVAILABLE at once, L2CAP is not held up"
  local out hpid hrc
  out=$(outdir busy)
  start_recv busy "$out" -v || fail "receiver did not start"
  timeout -k 10 120 /usr/bin/python3 "$HOSTILE" --mode hold-write --adapter hci1 --hold 100 \
    > "$W/logs/busy-holder.out" 2> "$W/logs/busy-holder.err" &
  hpid=$!
  PIDS+=("$hpid")
  wait_for "$W/logs/busy-holder.out" '"event": "acquired"' 45 "$hpid" \
    || fail "the helper did not acquire the write socket: $(tr '\n' ' ' < "$W/logs/busy-holder.out")"
  send_run busy --transport gatt --to "$RPUB" "$W/files/k20.bin"
  log "blesend against a held characteristic: $(grep -m1 'error:' "$SLOG.err")"
  check "blesend exit $SRC, want $EXIT_BLUETOOTH_UNAVAILABLE (another local program holds the characteristic)" [ "$SRC" = "$EXIT_BLUETOOTH_UNAVAILABLE" ]
  check "blesend took ${SEND_SECS} s, want under 15 (no reconnections; its --timeout is 40)" \
    awk -v s="$SEND_SECS" 'BEGIN { exit !(s < 15) }'
  check "no 'another program on this machine holds' error line" grep -q 'error: another program on this machine holds' "$SLOG.err"
  check "no hint line" grep -q 'hint:' "$SLOG.err"
  check "blesend reconnected" lacks "$SLOG.err" 'reconnecting'
  check "something in the folder: $(ls -A "$out" | tr '\n' ' ')" [ -z "$(ls -A "$out")" ]
  # An L2CAP channel does not go through the characteristic: the default transport is not held up.
  send_run busy-l2cap --json --to "$RPUB" "$W/files/k24.bin"
  check "blesend (auto) while the characteristic is held: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "while held, connected over '$(transports "$SLOG.out")', want l2cap (L2CAP failed: $(fallbacks "$SLOG.out"))" all_l2cap "$SLOG.out"
  check "k24.bin differs or missing" same "$W/files/k24.bin" "$out/k24.bin"
  kill -TERM "$hpid" 2>/dev/null
  wait_pid "$hpid" 20; hrc=$WRC
  log "helper: exit $hrc: $(tr '\n' ' ' < "$W/logs/busy-holder.out")"
  # Once the socket is free, the next send goes through.
  send_run busy-after --transport gatt --to "$RPUB" "$W/files/k20.bin"
  check "a send after the helper let go: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "k20.bin differs or missing" same "$W/files/k20.bin" "$out/k20.bin"
  check "receiver died" kill -0 "$RECV_PID"
  stop_recv
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  end "$SLOG.err" "$W/logs/busy-holder.out" "$W/logs/busy-holder.err" "$RECV_LOG.err"
}

# Another client on the system bus sends blerecv signals in the bus's name and bluetoothd's
# (issue 31; Tests/Lab/spoof-signals.py, unicast and broadcast): bluetoothd left, then "we own
# org.bluez now"; the sender's link went down mid-transfer; a stranger's link came up. Any local
# user may send those. blerecv must judge a signal by its sender (the bus itself, or org.bluez's
# owner): the transfer goes on on its first connection, nothing is disconnected 8 s later, and
# blerecv neither thinks bluetoothd left nor stops serving.
case_spoofed_signals() {
  begin "attack: signals spoofed by another bus client (bluetoothd left, a link down, a link up) change nothing"
  local out t left
  out=$(outdir spoof)
  start_recv spoof "$out" -v || fail "receiver did not start"
  send_bg spoof --json --transport gatt --to "$RPUB" "$W/files/m1b.bin"
  wait_progress "$SLOG.out" $((64 * 1024)) 60 "$SPID" || fail "no progress before the spoofed signals"
  t=$(now)
  /usr/bin/python3 "$SPOOF" "$RECV_PID" /org/bluez/hci0/dev_00_AA_01_01_00_01 /org/bluez/hci0/dev_00_AA_01_99_00_99 \
    > "$W/logs/spoof.out" 2> "$W/logs/spoof.err"
  log "spoofed: $(cat "$W/logs/spoof.out")"
  check "the spoofing helper did not send: $(tr '\n' ' ' < "$W/logs/spoof.err")" grep -q '"sent"' "$W/logs/spoof.out"
  finish_send 120
  check "blesend: exit $SRC, want $EXIT_SUCCESS" [ "$SRC" = "$EXIT_SUCCESS" ]
  check "m1b.bin differs or missing" same "$W/files/m1b.bin" "$out/m1b.bin"
  check "blesend connected $(events "$SLOG.out" count connected) times, want 1 (the spoofed Connected=false cut the link)" \
    [ "$(events "$SLOG.out" count connected)" = 1 ]
  # The stranger's link would be disconnected 8 s (the bare-link limit) after its Connected=true.
  left=$(awk -v t="$(elapsed "$t")" 'BEGIN { w = 11 - t; print (w > 0 ? w : 0) }')
  sleep "$left"
  check "receiver believed the spoofed NameOwnerChanged" lacks "$RECV_LOG.err" 'bluetoothd went away'
  check "receiver acted on the spoofed Connected=true" lacks "$RECV_LOG.err" 'dev_00_AA_01_99_00_99'
  check "receiver died" kill -0 "$RECV_PID"
  next_sender_served spoof "the spoofed signals" "$out"
  stop_recv
  end "$W/logs/spoof.out" "$W/logs/spoof.err" "$SLOG.err" "$RECV_LOG.err"
}

# A device bonded with the receiver's adapter (the user's keyboard or headset, played by hci1:
# Tests/Lab/bonded-peer.py) reconnects while blerecv runs and opens nothing of the transfer
# service (issue 31, item 1). blerecv ended such a link as bare 8 s after it came up (and cut a
# pairing with it); now it leaves a paired device's link up, says so at -v, and serves the next
# sender. The pairing happens before blerecv starts (hci0 advertising through the helper).
case_bonded() {
  begin "a device bonded with the receiver's adapter reconnects: its link stays up 30 s, next sender served"
  local out prc hrc
  out=$(outdir bonded)
  timeout -k 2 90 /usr/bin/python3 "$BONDED" pair > "$W/logs/bonded-pair.out" 2> "$W/logs/bonded-pair.err"
  prc=$?
  log "pairing: exit $prc: $(tr '\n' ' ' < "$W/logs/bonded-pair.out")"
  check "hci1 did not bond with hci0: exit $prc" [ "$prc" = 0 ]
  start_recv bonded "$out" -v || fail "receiver did not start"
  if [ "$prc" = 0 ]; then
    local attempt
    for attempt in 1 2; do
      timeout -k 2 60 /usr/bin/python3 "$BONDED" hold --seconds 30 > "$W/logs/bonded-hold.out" 2> "$W/logs/bonded-hold.err"
      hrc=$?
      log "bonded link: exit $hrc: $(tr '\n' ' ' < "$W/logs/bonded-hold.out")"
      # Once (run 13 on trixie, 1 in 7 runs) the link dropped 4.3 s in, before blerecv's 8 s rule,
      # and blerecv had asked for no end of it: hold once more then; a drop blerecv asked for fails.
      [ "$hrc" = 3 ] && [ "$attempt" = 1 ] && ! grep -q "ended the link of .*dev_00_AA_01_01_00_01" "$RECV_LOG.err" || break
      log "the bonded link dropped and blerecv did not end it; holding it once more"
    done
    grep -q "ended the link of .*dev_00_AA_01_01_00_01" "$RECV_LOG.err" && fail "blerecv ended the bonded device's link"
    check "the bonded device's link did not stay up 30 s: exit $hrc, want 0" [ "$hrc" = 0 ]
    check "receiver did not say it left the bonded link up" grep -q 'left the link of .*dev_00_AA_01_01_00_01 up: paired' "$RECV_LOG.err"
  fi
  timeout -k 2 30 /usr/bin/python3 "$BONDED" forget > "$W/logs/bonded-forget.out" 2>&1
  next_sender_served bonded "the bonded device" "$out"
  check "receiver died" kill -0 "$RECV_PID"
  stop_recv
  end "$W/logs/bonded-pair.out" "$W/logs/bonded-pair.err" "$W/logs/bonded-hold.out" "$W/logs/bonded-hold.err" "$SLOG.err" "$RECV_LOG.err"
}

# Issue 31: the receiver's own adapter connects out while blerecv serves on it (hci0 as a central,
# sending m4.bin over L2CAP to a second blerecv on hci1). That link opens no channel to blerecv's
# service and is not a sender's (LinkStanding: outgoing): it carries the whole transfer on one
# connection, although rule 2 ends a link that stands bare for 8 s (the transfer takes 11-30 s
# here). Then the next sender is served. On demand (`faults.sh outgoing`), not in the default list:
# it costs 32-43 s a boot, which CI's cold run has no room for (issue 31's note, 2026-11-29); it
# passed on both images when it was added.
case_outgoing() {
  begin "an outgoing link of the receiver's adapter carries 4 MiB with no cut, next sender served"
  local out far far_pid orc t
  out=$(outdir outgoing)
  far=$(outdir outgoing-far)
  start_recv outgoing "$out" -vv || fail "receiver did not start"
  "$RECV" trust "$W/keys/other.pub" --name other --dir "$W/trust-far" > /dev/null 2>&1
  "$RECV" --adapter hci1 --trust "$W/trust-far" --key "$W/keys/stranger" --state "$W/state-far" --out "$far" \
    "${RECV_LINKS[@]}" --once > "$W/logs/outgoing-far.out" 2> "$W/logs/outgoing-far.err" &
  far_pid=$!
  PIDS+=("$far_pid")
  wait_for "$W/logs/outgoing-far.err" 'waiting for senders' 30 "$far_pid" || fail "the receiver on hci1 did not start"
  t=$(now)
  timeout -k 5 150 "$SEND" --adapter hci0 --key "$W/keys/other" --timeout 40 --json --to "$W/keys/stranger.pub" \
    "$W/files/m4.bin" > "$W/logs/outgoing-send.out" 2> "$W/logs/outgoing-send.err"
  orc=$?
  log "blesend from hci0: exit $orc after $(elapsed "$t")s, connections: $(count_event "$W/logs/outgoing-send.out" connected) over $(transports "$W/logs/outgoing-send.out")"
  check "blesend from hci0: exit $orc, want $EXIT_SUCCESS" [ "$orc" = "$EXIT_SUCCESS" ]
  check "m4.bin differs or missing at hci1's receiver" same "$W/files/m4.bin" "$far/m4.bin"
  check "the outgoing link was cut: $(count_event "$W/logs/outgoing-send.out" connected) connections, want 1" \
    [ "$(count_event "$W/logs/outgoing-send.out" connected)" = 1 ]
  # (bluetoothd, 5.66 and 5.82, sends no Connected=true for this adapter's own outgoing link, so
  # blerecv never hears of it, as the issue saw; where it does, rule 2 comes and LinkStanding
  # spares it, and blerecv says so at -v)
  if grep -q 'ending the link of .*dev_00_AA_01_01_00_01' "$RECV_LOG.err"; then
    check "receiver did not say it left the outgoing link up" grep -q 'left the link of .*dev_00_AA_01_01_00_01 up: an outgoing link' "$RECV_LOG.err"
  elif grep -q 'the link of .*dev_00_AA_01_01_00_01 is up' "$RECV_LOG.err"; then
    log "blerecv heard of the outgoing link; the transfer ended before rule 2's 8 s"
  else
    log "blerecv never heard of the outgoing link (no Connected=true from bluetoothd)"
  fi
  wait_pid "$far_pid" 10
  next_sender_served outgoing "the outgoing transfer" "$out"
  check "receiver died" kill -0 "$RECV_PID"
  stop_recv
  end "$W/logs/outgoing-send.err" "$W/logs/outgoing-far.err" "$SLOG.err" "$RECV_LOG.err"
}

case_soak() {
  begin "soak: 50 transfers, blerecv RSS and fds flat"
  local out i size name rpid stats rss hwm srss fds cs
  out=$(outdir soak)
  local -A RSS=() HWM=() SRSS=() FDS=()
  start_recv soak "$out" --json || fail "receiver did not start"
  rpid=$RECV_PID
  for i in $(seq 1 50); do
    size=$(( (8 + RANDOM % 57) * 1024 ))
    name=soak-$i.bin
    mkfile "$name" "$size"
    SEND_TIMEOUT=60 send_run "soak-$i" --to "$RPUB" "$W/files/$name"
    if [ "$SRC" != "$EXIT_SUCCESS" ] || ! same "$W/files/$name" "$out/$name"; then
      fail "transfer $i ($size B): blesend exit $SRC, file $(same "$W/files/$name" "$out/$name" && echo identical || echo differs/missing)"
      break
    fi
    rm -f "$W/files/$name" "$out/$name"
    case $i in
      1|10|25|50)
        wait_count "$RECV_LOG.out" done "$i" 10 || fail "receiver reported $(count_event "$RECV_LOG.out" done) sessions, want $i"
        sleep 0.5
        stats=$(proc_stats "$rpid"); read -r rss hwm srss fds cs <<< "$stats"
        RSS[$i]=$rss; HWM[$i]=$hwm; SRSS[$i]=$srss; FDS[$i]=$fds
        echo "# soak: after transfer $i: $(cat "/proc/$rpid/comm" 2>/dev/null) pid $rpid: VmRSS ${rss} KiB, VmHWM ${hwm} KiB, Rss (smaps) ${srss} KiB, fds $fds, context switches (all threads) $cs"
        ;;
    esac
  done
  if [ -n "${RSS[50]:-}" ]; then
    local growth=$(( RSS[50] - RSS[10] )) sgrowth=$(( SRSS[50] - SRSS[10] ))
    echo "# soak: growth 10->50: VmRSS ${growth} KiB, Rss (smaps) ${sgrowth} KiB (bound 4096 KiB); fds 1/10/25/50: ${FDS[1]}/${FDS[10]}/${FDS[25]}/${FDS[50]}"
    check "VmRSS grew by ${growth} KiB between transfers 10 and 50 (bound 4096 KiB)" [ "$growth" -le 4096 ]
    check "Rss (smaps) grew by ${sgrowth} KiB between transfers 10 and 50 (bound 4096 KiB)" [ "$sgrowth" -le 4096 ]
    check "fds grew after warm-up: ${FDS[10]} at 10 -> ${FDS[25]} at 25" [ "${FDS[25]}" -le $(( FDS[10] + 2 )) ]
    check "fds grew after warm-up: ${FDS[10]} at 10 -> ${FDS[50]} at 50" [ "${FDS[50]}" -le $(( FDS[10] + 2 )) ]
  else
    fail "the soak did not reach 50 transfers"
  fi
  check "receiver died during the soak" kill -0 "$rpid"
  stop_recv
  check "temporaries left: $(temporaries "$out")" no_temporaries "$out"
  end "$RECV_LOG.err" "$SLOG.err"
}

# BLESEND_FAULTS_MONITOR=1: record every GATT characteristic method call and Device1 call on the
# system bus (who acquired what, when), advertisement calls and Device1 property changes in
# logs/dbus-monitor.log, for diagnosing a failed case.
if [ "${BLESEND_FAULTS_MONITOR:-}" = 1 ]; then
  dbus-monitor --system "type='method_call',interface='org.bluez.GattCharacteristic1'" \
    "type='method_call',interface='org.bluez.Device1'" "type='method_call',interface='org.bluez.LEAdvertisingManager1'" \
    "type='signal',interface='org.freedesktop.DBus.Properties',arg0='org.bluez.Device1'" \
    "type='error'" > "$W/logs/dbus-monitor.log" 2>&1 &
  PIDS+=("$!")
fi

CASES=(readonly disk_full three_cuts receiver_killed receiver_killed_folder sender_killed sender_killed_folder sender_killed_rerun hostile replay_after_restart bare silent_subscriber empty_write busy spoofed_signals bonded sender_power receiver_power bluetoothd_restart soak)
log "faults suite, binaries in $BIN"
SKIP=()
while [ "${1:-}" = --skip ]; do SKIP+=("${2:?--skip needs a case name}"); shift 2; done
if [ $# -gt 0 ]; then CASES=("$@"); fi
for c in "${CASES[@]}"; do
  case " ${SKIP[*]} " in
    *" $c "*) log "case $c: skipped (--skip)"; continue;;
  esac
  "case_$c"
done
json_logs_case
log "suite took $(elapsed "$T0")s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
