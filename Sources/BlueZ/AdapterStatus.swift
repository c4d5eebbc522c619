import DBus

/// What bluetoothd says about one adapter (from `GetManagedObjects`): plain values for `doctor`.
public struct AdapterStatus: Sendable, Equatable {
    /// The object path, `/org/bluez/hci0`.
    public var path: String
    /// `Adapter1.Address`.
    public var address: String?
    /// `Adapter1.AddressType` ("public", or "random" for a static address): the identity
    /// address's type, not the one on the air (`AddressPrivacy`).
    public var addressType: String?
    /// `Adapter1.Alias`: the name anyone who connects reads (GAP Device Name), which is
    /// `Adapter1.Name` (main.conf `Name`, else the host name) until an alias is set.
    public var alias: String?
    /// `Adapter1.Name`: the system's name for it.
    public var systemName: String?
    /// `Adapter1.Powered`; nil when bluetoothd did not say.
    public var powered: Bool?
    /// `Adapter1.Roles`: "central" when the controller does LE, "peripheral" when it can also
    /// advertise, "central-peripheral" when both at once (bluetoothd 5.66 src/adapter.c, from the
    /// kernel's supported settings). Nil when this bluetoothd has no such property (older BlueZ).
    public var roles: [String]?
    /// `LEAdvertisingManager1` on the adapter. bluetoothd offers that interface only on
    /// controllers with LE ("Don't start advertising managers on non-LE controllers",
    /// src/adapter.c), so nil also says the controller has no LE.
    public var advertising: AdvertisingInstances?

    public init(path: String, address: String? = nil, powered: Bool? = nil, roles: [String]? = nil,
                advertising: AdvertisingInstances? = nil, addressType: String? = nil, alias: String? = nil, systemName: String? = nil) {
        self.path = path
        self.address = address
        self.addressType = addressType
        self.alias = alias
        self.systemName = systemName
        self.powered = powered
        self.roles = roles
        self.advertising = advertising
    }

    /// The last part of the path: "hci0".
    public var name: String { Self.name(of: path) }

    /// An adapter's name from its object path (`/org/bluez/hci0` → `hci0`; a bare name stays as it is).
    public static func name(of path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }

    /// The adapters among bluetoothd's objects, in path order (the first is the default adapter,
    /// as `BlueZAdapter.resolve` picks it).
    public static func list(_ objects: DBusManagedObjects) -> [AdapterStatus] {
        objects.keys.sorted().compactMap { path -> AdapterStatus? in
            guard let interfaces = objects[path], let adapter = interfaces[BlueZ.adapter] else { return nil }
            let manager = interfaces[BlueZ.advertisingManager]
            return AdapterStatus(
                path: path, address: adapter["Address"]?.string, powered: adapter["Powered"]?.bool,
                roles: adapter["Roles"]?.strings,
                advertising: manager.map {
                    AdvertisingInstances(supported: $0["SupportedInstances"]?.integer, active: $0["ActiveInstances"]?.integer)
                },
                addressType: adapter["AddressType"]?.string, alias: adapter["Alias"]?.string, systemName: adapter["Name"]?.string)
        }
    }
}

/// `LEAdvertisingManager1`'s `SupportedInstances` and `ActiveInstances` (nil where not given):
/// how many advertisements the controller can run at once, and how many run now.
public struct AdvertisingInstances: Sendable, Equatable {
    public var supported: Int?
    public var active: Int?

    public init(supported: Int?, active: Int?) {
        self.supported = supported
        self.active = active
    }
}

extension DBusValue {
    /// Any unsigned or signed integer BlueZ might use for a count (`y` in 5.66).
    var integer: Int? {
        switch unwrapped {
        case .byte(let n): Int(n)
        case .uint16(let n): Int(n)
        case .int16(let n): Int(n)
        case .uint32(let n): Int(n)
        case .int32(let n): Int(n)
        default: nil
        }
    }
}
