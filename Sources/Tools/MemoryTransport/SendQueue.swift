/// The bounded queue a BLE stack holds in front of the air, per side and direction, for
/// `RadioModel.sendQueue`: `buffers` LL packets (the controller's LE ACL buffers, of up to
/// `dataLength` bytes each). Each packet of a datagram holds a buffer from the moment the stack
/// accepts the datagram until that packet has ended on air. The stack accepts a datagram while
/// at least one buffer is free (so one datagram larger than the queue still goes in, as a socket
/// takes a write while it is below its limit); while none is, it accepts nothing, so the sending
/// endpoint keeps its datagrams (a blocking `send`, back-pressure) and stamps them only when they
/// enter the queue. Its RTT samples then hold at most a short queue's wait, not its whole window's.
///
/// What a real stack bounds, and what this assumes:
///
/// - **The controller's LE ACL buffers.** The host may only hand the controller as many ACL data
///   packets as it has buffers (HCI LE Read Buffer Size: `Total_Num_LE_ACL_Data_Packets` of
///   `LE_ACL_Data_Packet_Length` bytes, Core Spec Vol 4 Part E §7.8.2) and gets each one back
///   with a Number Of Completed Packets event once it has gone out. Linux's HCI scheduler
///   (`hci_sched_le`, the `le_cnt` credits) does exactly that. Controllers report a handful of
///   buffers, of up to 251 bytes with DLE: Zephyr's link-layer controller, for one, queues
///   `BT_CTLR_TX_BUFFERS` PDUs (range 1–19; default 7 when it serves a host over HCI, 3 otherwise).
/// - **The socket above it.** Linux charges every queued SDU to the L2CAP (or acquired ATT)
///   socket's send buffer and blocks `send` when it is full. Its default size
///   (`net.core.wmem_default`, about 208 KiB) is far larger than the controller's buffers: a
///   sender that wants a short queue has to ask for it (a small `SO_SNDBUF`, whose floor still
///   holds a few small SDUs, or by limiting what it has in flight). The model assumes it does, and
///   leaves the socket out: the queue is the controller's buffers.
/// - **Unit**: LL packets, as the controller counts them. A 244-byte GATT datagram is one packet,
///   so `typical` holds 8 of those; a 510-byte one takes 3 packets, a 4096-byte L2CAP SDU 17.
///
/// Host latency is not modelled: a buffer freed on air is refilled at once, so any queue keeps
/// the air busy while the sender has data; the bound only limits how long a datagram waits
/// before it goes out.
public struct SendQueue: Sendable, Equatable, CustomStringConvertible {
    /// LL packets the queue holds (at least 1).
    public var buffers: Int

    public init(buffers: Int) {
        precondition(buffers >= 1, "a send queue holds at least one packet")
        self.buffers = buffers
    }

    /// Eight LE ACL buffers: about what controllers report (Zephyr's HCI default of 7, rounded up).
    public static let typical = SendQueue(buffers: 8)

    public var description: String { "\(buffers) LL packets" }
}
