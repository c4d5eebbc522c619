#!/usr/bin/env python3
"""Summarise a btsnoop file from the lab (BT_MON=1: btmon -w, "monitor" format) without btmon.

    lab/snoop-summary.py RUN/btmon.snoop [FROM_EPOCH_SECONDS [TO_EPOCH_SECONDS]]

Prints, one line each with its wall-clock time (epoch seconds, as dbus-monitor prints them):
LE advertising, scanning and connection commands with their parameters and completion status,
Disconnect commands, Disconnection Complete and LE Connection Complete events, and the LE
signalling channel's channel requests and answers (L2CAP CID 5: credit-based connection
request/response with PSM, CIDs and result, disconnection, command reject), per controller.
Written because btmon -r (BlueZ 5.66) segfaulted on the long snoops of fault-suite boots.
Advertising parameters: interval min/max, then the type (00 ADV_IND connectable, 03 ADV_NONCONN_IND)
and own address type (00 public, 01 random).
"""
import struct
import sys

EPOCH = 0x00dcddb30f2f8000  # btsnoop timestamps: microseconds since year 0
NAMES = {0x2006: 'SetAdvParams', 0x2008: 'SetAdvData', 0x2009: 'SetScanRsp', 0x200a: 'SetAdvEnable',
         0x200b: 'SetScanParams', 0x200c: 'SetScanEnable', 0x200d: 'CreateConn', 0x200e: 'CreateConnCancel',
         0x0406: 'Disconnect', 0x2005: 'SetRandomAddr', 0x2036: 'SetExtAdvParams', 0x2039: 'SetExtAdvEnable',
         0x2041: 'SetExtScanParams', 0x2042: 'SetExtScanEnable', 0x2043: 'ExtCreateConn'}
# LE credit-based connection results (Core 5.3, Vol 3, Part A, 4.23): 0 success, 2 PSM not
# supported, 4 no resources, 5/6 authentication/authorization, 9 invalid source CID, 0x0a source CID in use.
SIGNALS = {0x01: 'CommandReject', 0x06: 'DisconnReq', 0x07: 'DisconnRsp', 0x14: 'LEConnReq', 0x15: 'LEConnRsp'}


def signalling(d):
    """The LE signalling command in an ACL packet (monitor format: handle, length, L2CAP), or None."""
    if len(d) < 12:
        return None
    handle, _ = struct.unpack('<HH', d[:4])
    if (handle >> 12) & 3 not in (0, 2):  # only a packet that starts an L2CAP frame
        return None
    _, cid = struct.unpack('<HH', d[4:8])
    code, ident = d[8], d[9]
    if cid != 5 or code not in SIGNALS:
        return None
    body = d[12:]
    text = f"handle={handle & 0x0fff:#x} {SIGNALS[code]} id={ident}"
    if code == 0x14 and len(body) >= 4:
        psm, scid = struct.unpack('<HH', body[:4])
        text += f" psm={psm:#x} scid={scid:#x}"
    elif code == 0x15 and len(body) >= 10:
        dcid, _, _, _, result = struct.unpack('<HHHHH', body[:10])
        text += f" dcid={dcid:#x} result={result:#x}"
    elif code in (0x06, 0x07) and len(body) >= 4:
        dcid, scid = struct.unpack('<HH', body[:4])
        text += f" dcid={dcid:#x} scid={scid:#x}"
    elif code == 0x01 and len(body) >= 2:
        text += f" reason={struct.unpack('<H', body[:2])[0]:#x}"
    return text


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lo = float(sys.argv[2]) if len(sys.argv) > 2 else 0
    hi = float(sys.argv[3]) if len(sys.argv) > 3 else 1e12
    with open(sys.argv[1], 'rb') as f:
        f.read(16)  # "btsnoop\0", version, datalink
        while True:
            record = f.read(24)
            if len(record) < 24:
                break
            _, length, flags, _, stamp = struct.unpack('>IIIIq', record)
            d = f.read(length)
            if len(d) < length:
                break
            t = (stamp - EPOCH) / 1e6
            if not lo <= t <= hi:
                continue
            index, opcode = flags >> 16, flags & 0xffff  # monitor format: controller index, packet kind
            where = f"{t:.3f} hci{index}"
            if opcode == 2:  # command
                op = struct.unpack('<H', d[:2])[0]
                if op in NAMES:
                    print(where, 'CMD', NAMES[op], d[3:].hex())
            elif opcode == 3:  # event
                if d[0] == 0x0e and struct.unpack('<H', d[3:5])[0] in NAMES:
                    print(where, '  complete', NAMES[struct.unpack('<H', d[3:5])[0]], f"status={d[5]:#x}")
                elif d[0] == 0x0f and struct.unpack('<H', d[4:6])[0] in NAMES:
                    print(where, '  status', NAMES[struct.unpack('<H', d[4:6])[0]], f"status={d[2]:#x}")
                elif d[0] == 0x05:
                    print(where, 'EVT DisconnectionComplete', d[2:].hex())
                elif d[0] == 0x3e and d[2] in (0x01, 0x0a):
                    print(where, 'EVT LEConnectionComplete', d[3:12].hex())
            elif opcode in (4, 5):  # ACL sent, received
                text = signalling(d)
                if text:
                    print(where, 'ACL', 'sent' if opcode == 4 else 'received', text)


if __name__ == '__main__':
    main()
