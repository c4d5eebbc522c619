import Pairing

/// The service data of a receiver that is pairing (`blerecv pair`, docs/protocol.md §9.1): the
/// same 10 bytes under `TransferServiceUUID` as private discovery's, with its own header, so that
/// a sender running `blesend pair` or `blesend scan` tells a pairing receiver from every other
/// without connecting, and a sender looking for a pinned receiver never takes it for one.
///
/// ```
/// header 0x03 | name (9): the receiver's suggested name, ASCII, cut at 9 bytes, zero-padded
/// ```
///
/// The name is a hint for the people at both machines (which receiver is which), nothing more:
/// anyone can advertise any name, and only the pairing code authenticates (docs/threat-model.md).
/// A receiver that is pairing wants to be found, so it gives away no more than a device name does.
public struct PairingAdvertisement: Equatable, Sendable {
    /// The header byte: no private-discovery form has it (`DiscoveryForm`).
    public static let header: UInt8 = 0x03
    /// Bytes of the name that fit.
    public static let nameLength = DiscoveryLayout.serviceDataLength - DiscoveryLayout.headerLength

    /// The name as advertised (at most `nameLength` bytes, from the name alphabet).
    public let name: String

    public init(name: String) {
        self.name = String(decoding: Self.shown(name), as: UTF8.self)
    }

    /// The service data, as advertised.
    public var bytes: [UInt8] {
        let name = Array(name.utf8)
        return [Self.header] + name + [UInt8](repeating: 0, count: Self.nameLength - name.count)
    }

    /// The sender's side: service data from the radio, or nil when it is not a pairing
    /// receiver's (another length or header). Bytes outside the name alphabet (`PairingName`) are dropped.
    public static func parse(_ bytes: some Collection<UInt8>) -> PairingAdvertisement? {
        let bytes = Array(bytes)
        guard bytes.count == DiscoveryLayout.serviceDataLength, bytes[0] == header else { return nil }
        return PairingAdvertisement(name: String(decoding: bytes[1...].filter(PairingName.isNameByte), as: UTF8.self))
    }

    /// What of `name` is advertised: its bytes from the name alphabet, cut at `nameLength`.
    private static func shown(_ name: String) -> [UInt8] {
        Array(name.utf8.filter(PairingName.isNameByte).prefix(nameLength))
    }

}
