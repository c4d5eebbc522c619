/// The bounded queue a BLE stack holds in front of the air, per side and direction, for
/// `RadioModel.sendQueue`: a datagram takes a place when the stack accepts it and gives it back
/// when its last link-layer packet has ended on air. While the queue is full the stack accepts
/// nothing more, so the sending endpoint keeps its datagrams (a blocking `send`, back-pressure)
/// and stamps them only when they enter the queue: its RTT samples then hold at most a short
/// queue's wait, not its whole window's.
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
///   sender that wants a short queue has to ask for it (`SO_SNDBUF`, or by limiting what it has
///   in flight). The model assumes it does, so the queue is the controller's few buffers.
/// - **Unit**: whole datagrams (SDUs), as the socket counts them; a 244-byte GATT datagram is one
///   251-byte LL packet, so `typical` is 8 ACL buffers' worth of those. Larger datagrams take
///   several buffers each; counting them as one keeps the model simple and errs towards a longer
///   queue, not a shorter one.
///
/// Host latency is not modelled: a place freed on air is refilled at once, so any queue of at
/// least one keeps the air busy while the sender has data; the bound only limits how long a
/// datagram waits before it goes out.
public struct SendQueue: Sendable, Equatable, CustomStringConvertible {
    /// Datagrams the queue holds (at least 1).
    public var datagrams: Int

    public init(datagrams: Int) {
        precondition(datagrams >= 1, "a send queue holds at least one datagram")
        self.datagrams = datagrams
    }

    /// Eight datagrams: about the controller buffer counts above (Zephyr's HCI default of 7, rounded up).
    public static let typical = SendQueue(datagrams: 8)

    public var description: String { "\(datagrams) datagrams" }
}
