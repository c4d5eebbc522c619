import Framing
import Pipeline

/// `link`: a peer's datagrams into a `ReliableLink` (frame decoder, reorder window,
/// `MessageReassembler`), mixed with timer runs, local sends and transmissions.
///
/// Input: one configuration byte (window, datagram size, message limit, CRC mode), then operations:
/// `0` datagram (one-byte length; in CRC mode the target appends the right CRC so mutations reach
/// the structure checks), `1` time passes and timers run, `2` send a local message, `3` transmit.
///
/// Invariants:
/// - every delivered message is 1...maxMessageLength bytes, and all delivered bytes together never
///   exceed the datagram bytes received (nothing is invented or delivered twice);
/// - bounded buffers: at most `window - 1` frames wait in the reorder buffer; the outbound queue holds
///   at most what was sent; one transmission burst is at most `2 * window + 1` datagrams;
/// - every datagram the link emits fits `maxDatagramSize` and decodes;
/// - failure is sticky: once `receive` threw (protocol violation, or a dead link), every later one throws.
let linkTarget = FuzzTarget(
    name: "link",
    summary: "datagrams, timers and sends into ReliableLink (reassembly, reorder buffer, acks)",
    run: runLink,
    seeds: linkSeeds)

private let windows = [1, 4, 32, 256]
private let datagramSizes = [8, 20, 64, 182]

private struct LinkSetup {
    var configuration: LinkConfiguration
    var datagramSize: Int
    var appendsCRC: Bool

    init(_ byte: UInt8) {
        let window = windows[Int(byte & 3)]
        configuration = LinkConfiguration(window: window, ackEvery: max(1, window / 8),
                                          maxMessageLength: byte & 0x20 != 0 ? 300 : 65535)
        datagramSize = datagramSizes[Int(byte >> 2 & 3)]
        appendsCRC = byte & 0x10 != 0
    }

    static func byte(windowIndex: Int, sizeIndex: Int, appendsCRC: Bool) -> UInt8 {
        UInt8(windowIndex) | UInt8(sizeIndex) << 2 | (appendsCRC ? 0x10 : 0)
    }
}

private func runLink(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let setup = LinkSetup(input.byte())
    var link = ReliableLink(configuration: setup.configuration, maxDatagramSize: setup.datagramSize)
    let window = link.configuration.window
    let maxMessage = link.configuration.maxMessageLength
    var now = Instant.zero
    var receivedBytes = 0
    var deliveredBytes = 0
    var queuedBytes = 0
    var failed = false

    func takeMessages(_ link: inout ReliableLink) {
        while let message = link.nextMessage() {
            require(!message.isEmpty && message.count <= maxMessage, "delivered a message of \(message.count) bytes")
            deliveredBytes += message.count
        }
        require(deliveredBytes <= receivedBytes, "delivered \(deliveredBytes) bytes from \(receivedBytes) received")
        require(link.statistics.maxReorderBuffered < window,
                "\(link.statistics.maxReorderBuffered) frames in the reorder buffer, window \(window)")
        require(link.bufferedOutboundBytes >= 0 && link.bufferedOutboundBytes <= queuedBytes,
                "\(link.bufferedOutboundBytes) bytes buffered of \(queuedBytes) sent")
    }

    while !input.isEmpty {
        switch input.byte() & 3 {
        case 0:
            var datagram = input.chunk()
            if setup.appendsCRC { datagram.appendBigEndian(CRC16.checksum(datagram)) }
            receivedBytes += datagram.count
            do {
                try link.receive(datagram: datagram, now: now)
                require(!failed, "receive succeeded after the link failed")
            } catch {
                switch error {
                case .protocolViolation, .linkDead: failed = true
                case .messageTooLarge, .emptyMessage: require(false, "receive threw \(error)")
                }
            }
        case 1:
            now = now.advanced(by: .milliseconds(Int64(input.byte()) * 10))
            try? link.handleTimers(now: now)
        case 2:
            let message = input.chunk()
            if (try? link.send(message: message)) != nil { queuedBytes += message.count }
        default:
            var burst = 0
            while let datagram = link.nextDatagram(now: now) {
                burst += 1
                require(burst <= 2 * window + 1, "more than \(2 * window + 1) datagrams in one burst")
                require(datagram.count <= max(setup.datagramSize, FrameLayout.minimumDatagramSize),
                        "emitted \(datagram.count) bytes, limit \(setup.datagramSize)")
                require((try? FrameCodec.decode(datagram)) != nil, "emitted a datagram that does not decode")
            }
        }
        takeMessages(&link)
    }
}

private func linkSeeds() -> [FuzzSeed] {
    var seeds: [FuzzSeed] = []
    // What one side of a real exchange received, replayed with transmissions and timer runs in
    // between; once as captured (CRC included), once without CRCs for the CRC-appending mode.
    for (windowIndex, sizeIndex) in [(2, 1), (1, 0), (3, 3)] {
        let setupByte = LinkSetup.byte(windowIndex: windowIndex, sizeIndex: sizeIndex, appendsCRC: false)
        let setup = LinkSetup(setupByte)
        let capture = LinkCapture.run(configuration: setup.configuration, datagramSize: setup.datagramSize)
        for appendsCRC in [false, true] {
            var builder = FuzzInputBuilder()
            builder.byte(LinkSetup.byte(windowIndex: windowIndex, sizeIndex: sizeIndex, appendsCRC: appendsCRC))
            builder.byte(2)
            builder.chunk(Array("reply".utf8))
            for (index, datagram) in capture.toB.enumerated() {
                builder.byte(0)
                builder.chunk(appendsCRC ? Array(datagram.dropLast(FrameLayout.crcSize)) : datagram)
                if index % 8 == 7 {
                    builder.byte(3)
                    builder.byte(1)
                    builder.byte(5)
                }
            }
            builder.byte(3)
            let name = "window\(setup.configuration.window)-mtu\(setup.datagramSize)" + (appendsCRC ? "-crcmode" : "")
            seeds.append(FuzzSeed(name, builder.bytes))
        }
    }
    return seeds
}
