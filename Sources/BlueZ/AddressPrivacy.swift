import DBus
import L2CAP

/// Whether an adapter advertises from resolvable private addresses or from its fixed identity
/// address, as the kernel says (the management interface's Privacy setting, bit 13 of the
/// adapter's current settings; `btmgmt info` shows it as "privacy").
///
/// bluetoothd's D-Bus API cannot tell: `Adapter1.Address` is the identity address and
/// `Adapter1.AddressType` its type ("public", or "random" for an LE-only controller with a static
/// address) whatever main.conf's `Privacy` says (BlueZ `doc/org.bluez.Adapter.rst`: "With privacy
/// enabled this contains type of Identity Address and not type of address used for connection";
/// `property_get_address_type` in src/adapter.c looks at the identity address only, in 5.66 and
/// 5.82 alike). And main.conf is only what bluetoothd was meant to read (`bluetoothd -f` reads
/// another), so the kernel's own setting is asked.
public enum AddressPrivacy: Sendable, Equatable {
    /// Resolvable private addresses (main.conf `Privacy = device` or `network`).
    case on
    /// The adapter's fixed address (public, or static random) is in every advertisement.
    case off
    /// The kernel could not be asked; why.
    case unknown(PrivacyQueryFailure)

    /// From the adapter's current settings.
    public init(_ settings: ControllerSettings) {
        self = settings.contains(.privacy) ? .on : .off
    }

    /// Asks the kernel about `adapter` ("hci0").
    public static func kernelSetting(adapter: String) -> AddressPrivacy {
        guard let index = ManagementSocket.index(of: adapter) else { return .unknown(.notAnAdapterName(adapter)) }
        do {
            return AddressPrivacy(try ManagementSocket.controllerSettings(index: index))
        } catch {
            return .unknown(.managementInterface(error))
        }
    }

    /// The adapter `name` names (nil: bluetoothd's first, as `GattPeripheral` picks it) and its
    /// address privacy. Throws when bluetoothd cannot be asked which adapter that is.
    public static func resolving(adapter name: String?) async throws(BlueZError) -> (adapter: String, privacy: AddressPrivacy) {
        let adapter: String
        if let name, !name.hasPrefix("/") {
            adapter = name
        } else {
            let bus = try await BlueZAdapter.systemBus()
            do {
                let path = try await BlueZAdapter.resolve(bus, name: name)
                adapter = AdapterStatus.name(of: path)
            } catch {
                await bus.close()
                throw error
            }
            await bus.close()
        }
        return (adapter, kernelSetting(adapter: adapter))
    }
}

/// Why the kernel could not be asked about an adapter's address privacy.
public enum PrivacyQueryFailure: Sendable, Equatable, CustomStringConvertible {
    /// The adapter is not named `hciN` (the management interface knows adapters by index).
    case notAnAdapterName(String)
    /// The kernel's management interface failed or did not answer.
    case managementInterface(ManagementError)

    public var description: String {
        switch self {
        case .notAnAdapterName(let adapter): "\(adapter) is not an hciN name"
        case .managementInterface(let error): "the kernel's management interface did not answer: \(error)"
        }
    }
}
