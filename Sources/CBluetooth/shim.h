// The Linux Bluetooth socket definitions that Glibc's headers lack (the kernel's
// include/net/bluetooth/bluetooth.h, l2cap.h and hci_sock.h; values are the kernel's ABI). Only
// what blesend's L2CAP transport and its one management-interface read use; no library is linked.
#ifndef BLESEND_CBLUETOOTH_SHIM_H
#define BLESEND_CBLUETOOTH_SHIM_H

#include <stdint.h>
#include <sys/socket.h>

enum {
    BLESEND_AF_BLUETOOTH = 31,
    BLESEND_BTPROTO_L2CAP = 0,
    BLESEND_BTPROTO_HCI = 1,
    BLESEND_SOL_BLUETOOTH = 274,

    // Socket options at SOL_BLUETOOTH.
    BLESEND_BT_SECURITY = 4,
    BLESEND_BT_SNDMTU = 12,
    BLESEND_BT_RCVMTU = 13,
    BLESEND_BT_PHY = 14,
    BLESEND_BT_MODE = 15,

    BLESEND_BT_SECURITY_LOW = 1,
    BLESEND_BT_MODE_LE_FLOWCTL = 0x03,

    // BT_PHY bits for LE.
    BLESEND_BT_PHY_LE_1M_TX = 0x0200,
    BLESEND_BT_PHY_LE_1M_RX = 0x0400,
    BLESEND_BT_PHY_LE_2M_TX = 0x0800,
    BLESEND_BT_PHY_LE_2M_RX = 0x1000,
    BLESEND_BT_PHY_LE_CODED_TX = 0x2000,
    BLESEND_BT_PHY_LE_CODED_RX = 0x4000,

    // Address types (sockaddr_l2.l2_bdaddr_type).
    BLESEND_BDADDR_BREDR = 0,
    BLESEND_BDADDR_LE_PUBLIC = 1,
    BLESEND_BDADDR_LE_RANDOM = 2,

    // The management interface (sockaddr_hci.hci_channel; hci_dev when bound to it).
    BLESEND_HCI_CHANNEL_CONTROL = 3,
    BLESEND_HCI_DEV_NONE = 0xffff,
};

// A device address, least significant byte first (the reverse of "AA:BB:CC:DD:EE:FF").
typedef struct {
    uint8_t b[6];
} __attribute__((packed)) blesend_bdaddr;

// struct sockaddr_l2.
struct blesend_sockaddr_l2 {
    sa_family_t l2_family;
    uint16_t l2_psm;          // little-endian
    blesend_bdaddr l2_bdaddr;
    uint16_t l2_cid;          // little-endian
    uint8_t l2_bdaddr_type;
};

// struct sockaddr_hci.
struct blesend_sockaddr_hci {
    sa_family_t hci_family;
    unsigned short hci_dev;
    unsigned short hci_channel;
};

// struct bt_security.
struct blesend_bt_security {
    uint8_t level;
    uint8_t key_size;
};

#endif
