import DBus

/// One look at the system bus and bluetoothd, for `doctor`: what each step found, with the steps
/// after a failed one left nil. It only reads: nothing is registered, powered or changed.
public struct BluetoothdSurvey: Sendable, Equatable {
    /// The bus address tried: `DBUS_SYSTEM_BUS_ADDRESS`, or the default system socket.
    public var busAddress: String
    /// Why the bus could not be reached; nil when it was.
    public var busFailure: BlueZError?
    /// Whether `org.bluez` has an owner on the bus (`NameHasOwner`); nil when not asked.
    public var bluetoothdRunning: Result<Bool, BlueZError>?
    /// The adapters, from a real call to bluetoothd (`GetManagedObjects` on `/`), or why that call
    /// failed (`accessDenied` when the bus's policy keeps us from bluetoothd); nil when not asked.
    public var adapters: Result<[AdapterStatus], BlueZError>?

    public init(busAddress: String, busFailure: BlueZError? = nil, bluetoothdRunning: Result<Bool, BlueZError>? = nil,
                adapters: Result<[AdapterStatus], BlueZError>? = nil) {
        self.busAddress = busAddress
        self.busFailure = busFailure
        self.bluetoothdRunning = bluetoothdRunning
        self.adapters = adapters
    }

    /// Surveys the system bus, or the bus at `busAddress` (tests).
    public static func take(busAddress: String? = nil) async -> BluetoothdSurvey {
        let bus: DBusBus = busAddress.map { .address($0) } ?? .system
        var survey = BluetoothdSurvey(busAddress: (try? bus.resolve()) ?? "?")
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(bus)
        } catch {
            survey.busFailure = BlueZError.from(error)
            return survey
        }
        await survey.askBluetoothd(on: connection)
        await connection.close()
        return survey
    }
}

extension BluetoothdSurvey {
    /// The steps that need the bus: is bluetoothd there, and may we talk to it.
    private mutating func askBluetoothd(on connection: DBusConnection) async {
        do throws(BlueZError) {
            try await BlueZAdapter.requireBluetoothd(connection)
            bluetoothdRunning = .success(true)
        } catch .bluetoothdNotRunning {
            bluetoothdRunning = .success(false)
            return
        } catch {
            bluetoothdRunning = .failure(error)
            return
        }
        do {
            let objects = try await connection.managedObjects(destination: BlueZ.service, path: "/", timeout: .seconds(10))
            adapters = .success(AdapterStatus.list(objects))
        } catch {
            adapters = .failure(BlueZError.from(error))
        }
    }
}
