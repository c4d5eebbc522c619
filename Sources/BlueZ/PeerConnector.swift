/// How a sender reaches a receiver: each call finds one and opens a connection to it. The CLI's
/// send operation sees only this, so a test can hand it connections of its own.
public protocol PeerConnector: Sendable {
    /// Finds a receiver (looking at most `scanTime`, skipping the devices in `excluding`; devices in
    /// `known` were seen advertising earlier in this run and may be tried without a new sighting),
    /// connects and opens a transport. `progress` hears how far it got.
    func connect(scanTime: Duration, excluding: Set<String>, known: Set<String>,
                 progress: @escaping @Sendable (ConnectStep) -> Void) async throws(BlueZError) -> PeerConnection
}

/// How a receiver is reached: connections from senders, one `accept()` at a time.
public protocol PeerListener: Sendable {
    func accept() async throws(BlueZError) -> PeerConnection
    /// Ends the BLE link of a connection's peer (one that failed the handshake must not keep it).
    func disconnectPeer(of connection: PeerConnection) async
    func close() async
}

/// The real connector: BlueZ on the system bus, with these radio options.
public struct BlueZConnector: PeerConnector {
    public let radio: RadioOptions
    /// Judges private-discovery data (nil: every receiver is a candidate, as before it).
    public let recognises: (@Sendable ([UInt8]) -> Bool?)?
    /// Only receivers whose data `recognises` says yes to are candidates (`blesend pair`).
    public let onlyListed: Bool

    public init(radio: RadioOptions, recognises: (@Sendable ([UInt8]) -> Bool?)? = nil, onlyListed: Bool = false) {
        self.radio = radio
        self.recognises = recognises
        self.onlyListed = onlyListed
    }

    public func connect(scanTime: Duration, excluding: Set<String>, known: Set<String>,
                        progress: @escaping @Sendable (ConnectStep) -> Void) async throws(BlueZError) -> PeerConnection {
        try await GattCentral.connect(radio, scanTime: scanTime, excluding: excluding, known: known, recognises: recognises, onlyListed: onlyListed, progress: progress)
    }
}

extension GattPeripheral: PeerListener {}
