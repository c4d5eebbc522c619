import DBus
import L2CAP
import Pipeline

/// Which transport opens where: one row per transport (`TransportChoice.table`). A new transport
/// is one type with the row's three parts and one line in the table; `GattCentral` and
/// `GattPeripheral` only walk the table.
struct TransportRow: Sendable {
    /// How the sender opens it on an LE link whose services are resolved: nil when the receiver
    /// does not offer it, `.failure` when it is offered and did not open (`auto` then falls back),
    /// a thrown error when the connection cannot go on at all.
    var openOnCentral: @Sendable (CentralLink) async throws(BlueZError) -> Result<OpenedTransport, BlueZError>?
    /// How the receiver offers it, once, when it starts.
    var offerOnPeripheral: @Sendable (PeripheralSite) async -> PeripheralOffer
    /// The transport `auto` tries when this one is not offered or did not open; nil: none (the last).
    var fallback: TransportChoice?
    /// What a sender that asked for this transport alone hears when the receiver does not offer it.
    var notOffered: BlueZError
}

extension TransportChoice {
    /// The transports, by the `--transport` value that asks for each alone.
    static let table: [TransportChoice: TransportRow] = [
        .l2cap: TransportRow(openOnCentral: L2CAPTransport.openOnCentral, offerOnPeripheral: L2CAPTransport.offerOnPeripheral,
                             fallback: .gatt, notOffered: .l2capNotOffered),
        .gatt: TransportRow(openOnCentral: GattTransport.openOnCentral, offerOnPeripheral: GattTransport.offerOnPeripheral,
                            fallback: nil, notOffered: .characteristicMissing),
    ]

    /// Where `auto` starts (then it follows the rows' fallbacks).
    static let preferred: TransportChoice = .l2cap

    /// The transports this choice may use, in the order they are tried.
    var transports: [TransportChoice] {
        guard self == .auto else { return [self] }
        var chain: [TransportChoice] = []
        var next: TransportChoice? = Self.preferred
        while let current = next, !chain.contains(current) {
            chain.append(current)
            next = Self.table[current]?.fallback
        }
        return chain
    }

    /// Opens the first transport of this choice that opens on `link`. Falls back only under
    /// `auto`; says why the L2CAP channel was passed over (`PeerConnection.l2capFallback`).
    func open(on link: CentralLink) async throws(BlueZError) -> (opened: OpenedTransport, l2capFallback: L2CAPError?) {
        let chain = transports
        var l2capFallback: L2CAPError?
        for (index, choice) in chain.enumerated() {
            guard let row = Self.table[choice] else { continue }
            let last = index == chain.count - 1
            switch try await row.openOnCentral(link) {
            case .success(let opened)?:
                return (opened, l2capFallback)
            case .failure(let error)?:
                if last { throw error }
                if case .l2cap(let cause) = error { l2capFallback = cause }
            case nil:
                if last { throw row.notOffered }
            }
        }
        throw BlueZError.characteristicMissing
    }

    /// Starts offering every transport of this choice on the receiver's side.
    func offers(at site: PeripheralSite) async -> [PeripheralOffer] {
        var offers: [PeripheralOffer] = []
        for choice in transports {
            if let row = Self.table[choice] { offers.append(await row.offerOnPeripheral(site)) }
        }
        return offers
    }
}

/// The sender's LE link to a receiver, services resolved, on which a transport opens.
struct CentralLink: Sendable {
    let bus: DBusConnection
    let adapterPath: String
    let device: String
    /// The receiver's transfer characteristic (its service holds the other characteristics).
    let transferCharacteristic: String
    /// Whether the connect opened `bus` (then the transport closes it when done).
    let ownsBus: Bool

    /// What is left to do once the transport is closed: ask bluetoothd to end the LE link (without
    /// waiting), and close the bus if it is ours.
    func release() async {
        await bus.requestDisconnect(device)
        if ownsBus { await bus.close() }
    }
}

/// A transport the sender opened, and what to do besides when its connection closes.
struct OpenedTransport: Sendable {
    var transport: any DatagramTransport
    var cleanup: @Sendable () async -> Void = {}
}

/// Where the receiver offers transports.
struct PeripheralSite: Sendable {
    let bus: DBusConnection
    let adapterPath: String
}

/// One transport as the receiver offers it: what the GATT service publishes for it, and where its
/// connections come from when they do not come through the transfer characteristic.
struct PeripheralOffer: Sendable {
    /// The PSM to publish in the service (L2CAP).
    var psm: UInt16?
    /// Why it is not offered although asked for.
    var unavailable: L2CAPError?
    /// The next connection, nil once the offer is closed; nil when connections come by GATT.
    var accept: (@Sendable () async -> PeerConnection?)?
    var close: @Sendable () -> Void = {}
}
