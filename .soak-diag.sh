#!/bin/bash
cd /work/main; BLESEND_BIN=${BLESEND_BIN:-}
BLESEND_FAULTS_MONITOR=1 Tests/Lab/faults.sh soak; rc=$?
echo "=== dmesg"; dmesg | grep -i -E "bluetooth|hci" | tail -30
for i in 0 1; do echo "=== btmgmt $i"; timeout 5 btmgmt --index $i info 2>&1 | tail -5; timeout 5 btmgmt --index $i advinfo 2>&1 | tail -5; done
echo "=== devices"; busctl --system tree org.bluez 2>&1 | head -20
exit $rc
