import Pipeline

/// What a running receiver is doing, as its user would ask (`systemctl status`'s line; the
/// receiver's status): its transfer channels with their sender, file and bytes, and the last
/// results. Sans-IO: told what happens, at which `Instant`; read as a value.
struct ReceiverActivity: Equatable, Sendable {
    /// One transfer channel being served.
    struct Channel: Equatable, Sendable {
        var device: String?
        var transport: String
        /// Its sender, once it authenticated.
        var peer: String?
        var fingerprint: String?
        /// The file in progress: its name, size if known, bytes so far, and where and when it
        /// started on this connection (for the rate).
        var file: String?
        var total: UInt64?
        var done: UInt64 = 0
        var startedAt: Instant?
        var startOffset: UInt64 = 0
    }

    /// A file received or failed.
    struct Result: Equatable, Sendable {
        var name: String
        var peer: String
        var bytes: UInt64
        var saved: Bool
    }

    /// How many results are kept.
    static let recentCount = 5

    var trusted: Int
    var maxLinks: Int
    /// Whether a new sender can connect now (false while every slot is taken).
    var advertising = true
    private(set) var channels: [UInt64: Channel] = [:]
    private(set) var recent: [Result] = []

    init(trusted: Int, maxLinks: Int) {
        self.trusted = trusted
        self.maxLinks = maxLinks
    }

    mutating func opened(_ channel: UInt64, device: String?, transport: String) {
        channels[channel] = Channel(device: device, transport: transport)
    }

    mutating func authenticated(_ channel: UInt64, peer: String, fingerprint: String) {
        channels[channel]?.peer = peer
        channels[channel]?.fingerprint = fingerprint
    }

    mutating func fileStarted(_ channel: UInt64, name: String, size: UInt64?, offset: UInt64, at now: Instant) {
        guard channels[channel] != nil else { return }
        channels[channel]?.file = name
        channels[channel]?.total = size
        channels[channel]?.done = offset
        channels[channel]?.startOffset = offset
        channels[channel]?.startedAt = now
    }

    mutating func progress(_ channel: UInt64, done: UInt64) {
        channels[channel]?.done = done
    }

    mutating func fileEnded(_ channel: UInt64, name: String, peer: String, bytes: UInt64, saved: Bool) {
        channels[channel]?.file = nil
        channels[channel]?.total = nil
        channels[channel]?.done = 0
        recent.append(Result(name: name, peer: peer, bytes: bytes, saved: saved))
        if recent.count > Self.recentCount { recent.removeFirst(recent.count - Self.recentCount) }
    }

    mutating func closed(_ channel: UInt64) {
        channels[channel] = nil
    }

    /// Bytes per second of a channel's file since it started on this connection (nil: too early).
    func rate(of channel: Channel, at now: Instant) -> Double? {
        guard let start = channel.startedAt else { return nil }
        let seconds = now.duration(since: start).seconds
        guard seconds >= 1 else { return nil }
        return Double(channel.done - min(channel.done, channel.startOffset)) / seconds
    }

    /// The links and the files in progress, without the bytes: what changes seldom.
    var shape: [UInt64: String?] { channels.mapValues(\.file) }

    /// One line for `systemctl status`: the busiest transfer first.
    ///
    ///     waiting for senders (3 trusted)
    ///     receiving photo.jpg from alice 45 %, 2 links
    ///     2 links, no file yet
    var statusLine: String {
        let links = channels.count
        guard links > 0 else { return "waiting for senders (\(trusted) trusted)" }
        let linkCount = "\(links) link\(links == 1 ? "" : "s")"
        let receiving = channels.sorted { $0.key < $1.key }.map(\.value).filter { $0.file != nil }
        guard let first = receiving.first, let file = first.file else { return "\(linkCount), no file yet" }
        var line = "receiving \(file)"
        if let peer = first.peer { line += " from \(peer)" }
        if let total = first.total, total > 0 { line += " \(min(100, first.done * 100 / total)) %" }
        if receiving.count > 1 { line += " (+\(receiving.count - 1) more)" }
        return line + ", " + linkCount
    }
}
