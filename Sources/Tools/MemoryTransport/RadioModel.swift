/// The air time of a BLE connection: what a datagram costs on the radio, for `RadioScheduler`.
///
/// A pure value: sizes and durations only, no state. Numbers from the Bluetooth Core
/// Specification (Vol 6 Part B §2.1 packet format, §4.1.1 inter-frame space; Vol 3 Part A
/// L2CAP; Vol 3 Part F ATT):
///
/// - **Bit rate.** LE 1M sends one byte in 8 µs, LE 2M in 4 µs. The preamble is 1 byte on 1M and
///   2 bytes on 2M; every other field is the same on both.
/// - **One LL data packet** on air = preamble + access address (4) + LL header (2) + payload
///   (0…`dataLength`) + CRC (3). No MIC: blesend uses no link-layer encryption (its security is
///   its own, above), so the 4-byte MIC never appears. A full 251-byte payload on 1M:
///   (1 + 4 + 2 + 251 + 3) × 8 µs = 2088 µs (2120 µs with a MIC, the figure usually quoted);
///   an empty packet: 80 µs on 1M, 44 µs on 2M.
/// - **Data length**: the LL payload limit, 27 bytes without the Data Length Extension, up to 251
///   with it.
/// - **Transport overhead per datagram** (one SDU): GATT puts each datagram in an ATT Write
///   Command (central → peripheral) or Handle Value Notification (peripheral → central): a 3-byte
///   ATT header (opcode, handle), in one L2CAP basic frame with a 4-byte header. L2CAP LE
///   credit-based channels carry an SDU in K-frames of at most `mps` bytes of payload each, every
///   K-frame with a 4-byte L2CAP header and the first one with the 2-byte SDU length.
/// - Every L2CAP PDU starts a new LL packet (LLID "start"), and is cut into LL packets of at
///   most `dataLength` bytes.
/// - **Connection events**: see `RadioScheduler`.
/// - **The queue in front of the air**: `sendQueue`, bounded by default (see `SendQueue`): a
///   side's stack accepts a datagram only while its queue has room, so a sender is held back
///   instead of queueing its whole window.
///
/// What is not modelled: retransmissions at the link layer (the radio is error-free: a lost
/// packet on air would only cost air time), L2CAP credits (the receiver is assumed to grant
/// enough), HCI and host latency (a freed buffer is refilled at once), channel-map gaps, other
/// links sharing the controller.
public struct RadioModel: Sendable, Equatable, CustomStringConvertible {
    public enum PHY: Sendable, Equatable {
        case le1M, le2M

        /// Nanoseconds per byte on air.
        public var nanosecondsPerByte: Int64 { self == .le1M ? 8_000 : 4_000 }
        /// Preamble bytes.
        public var preambleBytes: Int { self == .le1M ? 1 : 2 }
    }

    public enum Transport: Sendable, Equatable {
        /// ATT Write Command / Handle Value Notification (3-byte header) in an L2CAP basic frame (4 bytes).
        case gatt
        /// L2CAP LE credit-based channel: K-frames of at most `mps` payload bytes (the first one's
        /// including the 2-byte SDU length), each with a 4-byte L2CAP header.
        case l2capCoC(mps: Int)
    }

    /// Inter-frame space between two packets of a connection event (T_IFS).
    public static let interFrameSpace: Int64 = 150_000
    /// LL header, access address, CRC: the bytes of a packet besides preamble and payload.
    public static let packetOverheadBytes = 2 + 4 + 3
    public static let attHeaderBytes = 3
    public static let l2capHeaderBytes = 4
    public static let sduLengthBytes = 2

    public var phy: PHY
    /// Largest LL payload: 27 (no DLE) to 251.
    public var dataLength: Int
    public var connectionInterval: Duration
    /// Data packets per connection event, central → peripheral; nil: as many as fit.
    public var maxPacketsPerEventFromCentral: Int?
    /// Data packets per connection event, peripheral → central; nil: as many as fit.
    public var maxPacketsPerEventFromPeripheral: Int?
    public var transport: Transport
    /// The queue each side's stack holds in front of the air; nil: unbounded (the sender's whole
    /// window waits for air, stamped long before it goes out).
    public var sendQueue: SendQueue?

    public init(phy: PHY = .le1M, dataLength: Int = 251, connectionInterval: Duration = .milliseconds(30),
                maxPacketsPerEvent: Int? = nil, transport: Transport = .gatt, sendQueue: SendQueue? = .typical) {
        precondition((27...251).contains(dataLength), "LL data length is 27...251")
        self.phy = phy
        self.dataLength = dataLength
        self.connectionInterval = connectionInterval
        self.maxPacketsPerEventFromCentral = maxPacketsPerEvent
        self.maxPacketsPerEventFromPeripheral = maxPacketsPerEvent
        self.transport = transport
        self.sendQueue = sendQueue
    }

    /// An L2CAP LE credit-based channel whose K-frames each fill one LL packet (`mps` =
    /// `dataLength` − 4), as Linux sizes the MPS from the controller's LE ACL buffer.
    public static func l2capCoC(dataLength: Int) -> Transport { .l2capCoC(mps: dataLength - l2capHeaderBytes) }

    /// Air time of one LL data packet carrying `payload` bytes (0: an empty packet), in nanoseconds.
    public func packetAirTime(payload: Int) -> Int64 {
        Int64(phy.preambleBytes + Self.packetOverheadBytes + payload) * phy.nanosecondsPerByte
    }

    /// The LL payload sizes that carry one datagram of `size` bytes, in order.
    public func packets(forDatagram size: Int) -> [Int] {
        var out: [Int] = []
        func split(l2capPDU length: Int) {
            var left = length
            repeat {
                out.append(min(left, dataLength))
                left -= dataLength
            } while left > 0
        }
        switch transport {
        case .gatt:
            split(l2capPDU: Self.l2capHeaderBytes + Self.attHeaderBytes + size)
        case .l2capCoC(let mps):
            precondition(mps > Self.sduLengthBytes)
            var left = Self.sduLengthBytes + size
            repeat {
                let payload = min(left, mps)
                split(l2capPDU: Self.l2capHeaderBytes + payload)
                left -= mps
            } while left > 0
        }
        return out
    }

    /// How many LL packets carry one datagram of `size` bytes (`packets(forDatagram:).count`, without the array).
    public func packetCount(forDatagram size: Int) -> Int {
        func count(l2capPDU length: Int) -> Int { max(1, (length + dataLength - 1) / dataLength) }
        switch transport {
        case .gatt:
            return count(l2capPDU: Self.l2capHeaderBytes + Self.attHeaderBytes + size)
        case .l2capCoC(let mps):
            let sdu = Self.sduLengthBytes + size
            let frames = max(1, (sdu + mps - 1) / mps)
            let last = sdu - (frames - 1) * mps
            return (frames - 1) * count(l2capPDU: Self.l2capHeaderBytes + mps) + count(l2capPDU: Self.l2capHeaderBytes + last)
        }
    }

    /// Air time of one datagram's packets alone (no empty packets, no inter-frame spaces).
    public func airTime(forDatagram size: Int) -> Int64 {
        packets(forDatagram: size).reduce(0) { $0 + packetAirTime(payload: $1) }
    }

    public var description: String {
        let cap = maxPacketsPerEventFromCentral.map { "\($0)/event" } ?? "unlimited"
        let kind: String
        switch transport {
        case .gatt: kind = "GATT"
        case .l2capCoC(let mps): kind = "L2CAP CoC (MPS \(mps))"
        }
        let queue = sendQueue.map { "queue \($0.buffers)" } ?? "unbounded queue"
        return "\(phy == .le1M ? "1M" : "2M") PHY, DLE \(dataLength), CI \(connectionInterval), \(cap), \(kind), \(queue)"
    }
}
