#!/usr/bin/env bash
# Tests the installed blesend package on a throw-away machine (VM or container) with BlueZ
# running: bluetoothd on the system bus and two LE adapters that can reach each other.
#
#   scripts/test-package.sh [--deb PATH] [--mode auto|systemd|direct]
#                           [--recv-adapter hciN] [--send-adapter hciN] [--bytes N]
#
# As root. Steps: install PATH if given (apt-get install, else dpkg -i); check the layout the
# package promises (binaries, --version, man pages, completions, docs, unit and its resource
# limits, the blesend system user in group bluetooth, /etc/blesend/trusted root's and 0755); make
# an ordinary user (blesend-test, group bluetooth, no other rights) with its own key; trust it in
# /etc/blesend/trusted; start the receiver the way blerecv.service does; check /var/lib/blesend
# (made by the unit's StateDirectory=, not by the package) is blesend's and 0750; send a file as
# blesend-test; check that it arrives in /var/lib/blesend/incoming intact, and that the
# receiver's key was made 0600 for blesend.
#
# The receiver runs as the unit says, read from the installed unit file:
#   systemd  systemctl start blerecv (needs systemd as PID 1), adapter options through
#            /etc/default/blerecv (restored afterwards).
#   direct   no systemd (the lab VM): the unit's StateDirectory= folders, its ExecStartPre= and
#            ExecStart= as its User=/Group=/SupplementaryGroups= with its UMask=, no capabilities
#            and no_new_privs (setpriv); the sandboxing options are not applied.
#   auto     systemd if /run/systemd/system exists, else direct (default).
# Adapters: the receiver gets --adapter hci0, the sender hci1 (the lab's two controllers); give ""
# for BlueZ's first adapter. --bytes: size of the test file (default 200000).
#
# Exit status: 0 passed, 1 a check failed, 2 usage or environment problem. Prints "ok - ..." or
# "not ok - ..." per check and the receiver's log on failure.
set -uo pipefail

deb=""
mode=auto
recv_adapter=hci0
send_adapter=hci1
bytes=200000
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) deb=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --recv-adapter) recv_adapter=$2; shift 2 ;;
    --send-adapter) send_adapter=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "test-package: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "test-package: run as root" >&2; exit 2; }
if [ "$mode" = auto ]; then
  if [ -d /run/systemd/system ]; then mode=systemd; else mode=direct; fi
fi
case "$mode" in systemd|direct) ;; *) echo "test-package: --mode auto|systemd|direct" >&2; exit 2 ;; esac

sender=blesend-test
unit=/usr/lib/systemd/system/blerecv.service
W=$(mktemp -d /tmp/blesend-test-package.XXXXXX)
chmod 0755 "$W"
RECV_PID=""
FAILED=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; FAILED=1; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
log() { echo "# $*"; }

cleanup() {
  if [ "$mode" = systemd ]; then
    systemctl stop blerecv.service 2>/dev/null
    [ -f "$W/default.orig" ] && cp "$W/default.orig" /etc/default/blerecv
  elif [ -n "$RECV_PID" ]; then
    kill "$RECV_PID" 2>/dev/null; sleep 0.5; kill -9 "$RECV_PID" 2>/dev/null
  fi
  rm -f /etc/blesend/trusted/blesend-test.pub "/var/lib/blesend/incoming/$(basename "$W")".bin
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. Install.
if [ -n "$deb" ]; then
  [ -f "$deb" ] || { echo "test-package: no such file: $deb" >&2; exit 2; }
  case "$deb" in /*) ;; *) deb=$PWD/$deb ;; esac
  log "installing $deb"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" >"$W/install.log" 2>&1; then
    log "apt-get failed (offline?); trying dpkg -i"
    dpkg -i "$deb" >>"$W/install.log" 2>&1 || { sed 's/^/#   | /' "$W/install.log"; bad "package installs"; exit 1; }
  fi
  ok "package installs"
fi
version=$(dpkg-query -W -f='${Version}' blesend 2>/dev/null) || { echo "test-package: blesend is not installed" >&2; exit 2; }
log "blesend $version installed; receiver mode: $mode"

# 2. Layout.
for tool in blesend blerecv; do
  check "$tool --version names version $version" grep -qx "$tool $version (protocol [0-9]*)" <(/usr/bin/$tool --version)
  check "$tool man page" test -s /usr/share/man/man1/$tool.1.gz
  check "$tool completions (bash, zsh, fish)" test -s /usr/share/bash-completion/completions/$tool \
    -a -s /usr/share/zsh/vendor-completions/_$tool -a -s /usr/share/fish/vendor_completions.d/$tool.fish
done
check "no Swift runtime libraries needed" bash -c '! ldd /usr/bin/blesend /usr/bin/blerecv | grep -qi swift'
check "docs and copyright" test -s /usr/share/doc/blesend/copyright -a -s /usr/share/doc/blesend/changelog.gz \
  -a -e /usr/share/doc/blesend/protocol.md.gz -a -e /usr/share/doc/blesend/threat-model.md.gz
check "the --json contract: json-events.md in the docs, its schema uncompressed in /usr/share/blesend" \
  bash -c 'test -e /usr/share/doc/blesend/json-events.md.gz && grep -q "\"required\": \[\"event\", \"v\"\]" /usr/share/blesend/json-events.schema.json'
check "unit file" test -s "$unit"
check "system user blesend in group bluetooth" bash -c 'id -nG blesend | tr " " "\n" | grep -qx bluetooth'
check "blesend has no login shell" bash -c '[[ $(getent passwd blesend | cut -d: -f7) == */nologin || $(getent passwd blesend | cut -d: -f7) == /bin/false ]]'
check "trust directory /etc/blesend/trusted is root's, mode 755" test "$(stat -c '%U %G %a' /etc/blesend/trusted)" = "root root 755"
check "unit limits memory and tasks" bash -c "grep -qx 'MemoryMax=256M' '$unit' && grep -qx 'TasksMax=64' '$unit'"
check "unit makes /var/lib/blesend itself" grep -qx 'StateDirectory=blesend blesend/incoming' "$unit"

# 3. An ordinary user who sends, with its own key.
if ! id "$sender" >/dev/null 2>&1; then
  adduser --quiet --disabled-password --gecos "" "$sender" >/dev/null 2>&1 ||
    useradd --create-home "$sender" || { echo "test-package: cannot create user $sender" >&2; exit 2; }
fi
adduser --quiet "$sender" bluetooth >/dev/null 2>&1 || usermod -aG bluetooth "$sender"
home=$(getent passwd "$sender" | cut -d: -f6)
as_sender() { runuser -u "$sender" -- env HOME="$home" XDG_CONFIG_HOME= "$@"; }
rm -rf "$home/.config/blesend"
sender_keygen() { as_sender blesend keygen >"$W/keygen.log" 2>&1; }
check "$sender makes a key pair (as itself, in ~/.config/blesend)" sender_keygen
as_sender cat "$home/.config/blesend/id.pub" >"$W/sender.pub" || bad "sender's public key"
rm -f /etc/blesend/trusted/blesend-test.pub
trust_sender() { blerecv trust "$W/sender.pub" --name blesend-test --dir /etc/blesend/trusted 2>"$W/trust.log"; }
check "root trusts $sender in /etc/blesend/trusted" trust_sender

# 4. The receiver, as blerecv.service runs it.
unit_value() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }
recv_opts=${recv_adapter:+--adapter $recv_adapter}
if [ "$mode" = systemd ]; then
  cp /etc/default/blerecv "$W/default.orig"
  echo "BLERECV_OPTIONS=\"$recv_opts\"" >/etc/default/blerecv
  systemctl daemon-reload
  systemctl reset-failed blerecv.service 2>/dev/null
  since=$(date '+%Y-%m-%d %H:%M:%S')
  systemctl start blerecv.service || bad "systemctl start blerecv"
  recv_log() { journalctl -u blerecv.service --since "$since" --no-pager -o cat 2>/dev/null; }
  recv_alive() { systemctl is-active --quiet blerecv.service; }
else
  user=$(unit_value User) group=$(unit_value Group) groups=$(unit_value SupplementaryGroups)
  umask_value=$(unit_value UMask)
  mode_value=$(unit_value StateDirectoryMode)
  for dir in $(unit_value StateDirectory); do
    install -d -o "$user" -g "$group" -m "${mode_value:-0755}" "/var/lib/$dir"
  done
  # ExecStart's $BLERECV_OPTIONS from the EnvironmentFile, then ours, as systemd would split them.
  BLERECV_OPTIONS=""
  # shellcheck disable=SC1091
  [ -f /etc/default/blerecv ] && . /etc/default/blerecv
  BLERECV_OPTIONS="$BLERECV_OPTIONS $recv_opts"
  export BLERECV_OPTIONS
  as_service() {
    (umask "${umask_value:-0022}"
     exec setpriv --reuid "$user" --regid "$group" --groups "$(getent group "$groups" | cut -d: -f3)" \
       --no-new-privs --inh-caps=-all --bounding-set=-all --reset-env \
       env HOME=/var/lib/blesend LANG=C.UTF-8 BLERECV_OPTIONS="$BLERECV_OPTIONS" "$@")
  }
  pre=$(unit_value ExecStartPre)
  start=$(unit_value ExecStart)
  log "ExecStartPre: $pre"
  # The unit's lines are sh-compatible (one /bin/sh -c '...' and one plain command line).
  as_service /bin/sh -c "$pre" >"$W/recv.err" 2>&1 || bad "ExecStartPre (key on first start)"
  log "ExecStart: $start"
  as_service /bin/sh -c "exec $start" >>"$W/recv.err" 2>&1 &
  RECV_PID=$!
  recv_log() { cat "$W/recv.err"; }
  recv_alive() { kill -0 "$RECV_PID" 2>/dev/null; }
fi
waited=0
until recv_log | grep -q "waiting for senders"; do
  if ! recv_alive || [ $waited -ge 300 ]; then break; fi
  sleep 0.2; waited=$((waited + 1))
done
if recv_log | grep -q "waiting for senders"; then ok "receiver started as blesend"; else
  bad "receiver started as blesend"; recv_log | tail -n 20 | sed 's/^/#   | /'; exit 1
fi
check "/var/lib/blesend is blesend's, mode 750" test "$(stat -c '%U %a' /var/lib/blesend)" = "blesend 750"
check "/var/lib/blesend/incoming is blesend's, mode 750" test "$(stat -c '%U %a' /var/lib/blesend/incoming)" = "blesend 750"
check "receiver's key is blesend's, mode 600" test "$(stat -c '%U %a' /var/lib/blesend/id)" = "blesend 600"
check "receiver runs as blesend" bash -c "ps -o user= -C blerecv | grep -qx blesend"
# The administrator hands the receiver's public key to the sender.
install -m 0644 /var/lib/blesend/id.pub "$W/receiver.pub"

# 5. Send as the ordinary user.
name=$(basename "$W").bin
head -c "$bytes" /dev/urandom >"$W/$name"
chmod 0644 "$W/$name"
log "sending $bytes bytes as $sender"
as_sender timeout 180 blesend --to "$W/receiver.pub" ${send_adapter:+--adapter "$send_adapter"} "$W/$name" \
  >"$W/send.out" 2>"$W/send.err"
rc=$?
log "sender: $(tail -n 1 "$W/send.err")"
if [ $rc = 0 ]; then ok "$sender sends $name"; else
  bad "$sender sends $name (exit $rc)"; sed 's/^/#   send | /' "$W/send.err" | tail -n 20
fi
got=/var/lib/blesend/incoming/$name
for _ in $(seq 50); do [ -f "$got" ] && break; sleep 0.2; done
check "the file arrives intact in /var/lib/blesend/incoming" cmp -s "$W/$name" "$got"
check "the received file is blesend's" test "$(stat -c %U "$got" 2>/dev/null)" = blesend

if [ "$mode" = systemd ]; then
  # 5b. systemctl status shows what blerecv does (Type=notify, STATUS=): waiting, then the file
  # a sender is sending (1 MiB over GATT: seconds, polled every 0.1 s).
  status_text() { systemctl show -p StatusText --value blerecv.service; }
  check "systemctl status: blerecv says it waits for senders (StatusText: $(status_text))" bash -c "systemctl show -p StatusText --value blerecv.service | grep -q 'waiting for senders'"
  head -c 1048576 /dev/urandom >"$W/status.bin"
  chmod 0644 "$W/status.bin"
  as_sender timeout 180 blesend --to "$W/receiver.pub" --transport gatt ${send_adapter:+--adapter "$send_adapter"} "$W/status.bin" \
    >"$W/send-status.out" 2>"$W/send-status.err" &
  status_pid=$!
  seen=""
  while kill -0 "$status_pid" 2>/dev/null; do
    line=$(status_text)
    case "$line" in receiving*) seen=$line; break ;; esac
    sleep 0.1
  done
  # blerecv status from another shell, as the service's user, while the file is on its way.
  runuser -u blesend -- blerecv status --json >"$W/status.json" 2>"$W/status.err"; status_json_rc=$?
  runuser -u blesend -- blerecv status >"$W/status.txt" 2>&1
  log "blerecv status during the transfer: $(head -n 3 "$W/status.txt" | tr '\n' '|')"
  wait "$status_pid"; status_rc=$?
  log "StatusText during the transfer: ${seen:-none}; systemctl status: $(systemctl status blerecv.service --no-pager 2>/dev/null | grep -m1 'Status:' | sed 's/^ *//')"
  check "systemctl status: a STATUS line names the file being received (saw: ${seen:-none})" bash -c "case '$seen' in 'receiving status.bin from '*) exit 0;; *) exit 1;; esac"
  check "the 1 MiB file over GATT arrives (blesend exit $status_rc)" cmp -s "$W/status.bin" /var/lib/blesend/incoming/status.bin
  check "blerecv status --json (as blesend, exit $status_json_rc) names the transfer in progress" \
    grep -q '"event":"status".*"file":"status.bin"' "$W/status.json"
  check "blerecv status --json is one JSON line" test "$(grep -c '^{.*}$' "$W/status.json")" = 1
  check "blerecv status, as a user outside group blesend, says it may not ask the service" \
    bash -c "runuser -u nobody -- blerecv status 2>&1 | grep -q 'may not ask'"
  check "systemctl status: waiting again once the sender left (StatusText: $(status_text))" bash -c "sleep 2; systemctl show -p StatusText --value blerecv.service | grep -q 'waiting for senders'"

  # 6. systemctl reload: SIGHUP reads the trust directory again; blerecv stays the same process.
  pid=$(systemctl show -p MainPID --value blerecv.service)
  systemctl reload blerecv.service || bad "systemctl reload blerecv"
  for _ in $(seq 50); do recv_log | grep -q "SIGHUP: the trust directory" && break; sleep 0.2; done
  check "systemctl reload: blerecv says it reads the trust directory again" bash -c 'recv_log() { journalctl -u blerecv.service --no-pager -o cat; }; recv_log | grep -q "SIGHUP: the trust directory"'
  check "systemctl reload: blerecv is the same process" test "$(systemctl show -p MainPID --value blerecv.service)" = "$pid"
  # 7. Wants=, not Requires=: a restart of bluetoothd leaves blerecv running; it registers again
  #    and serves the next sender.
  systemctl restart bluetooth.service || bad "systemctl restart bluetooth"
  check "after systemctl restart bluetooth, blerecv is the same process" test "$(systemctl show -p MainPID --value blerecv.service)" = "$pid"
  sleep 3
  head -c 50000 /dev/urandom >"$W/again-$name"
  chmod 0644 "$W/again-$name"
  as_sender timeout 180 blesend --to "$W/receiver.pub" ${send_adapter:+--adapter "$send_adapter"} "$W/again-$name" \
    >"$W/send-again.out" 2>"$W/send-again.err"
  rc=$?
  log "sender after the bluetoothd restart: $(tail -n 1 "$W/send-again.err")"
  for _ in $(seq 50); do [ -f "/var/lib/blesend/incoming/again-$name" ] && break; sleep 0.2; done
  check "after systemctl restart bluetooth, the same blerecv receives a file (blesend exit $rc)" \
    cmp -s "$W/again-$name" "/var/lib/blesend/incoming/again-$name"
fi

if [ $FAILED = 0 ]; then echo "test-package: passed"; else
  echo "# receiver log:"; recv_log | tail -n 30 | sed 's/^/#   recv | /'
  echo "test-package: FAILED"
fi
exit $FAILED
