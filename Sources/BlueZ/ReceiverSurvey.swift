import DBus
import Synchronization

/// Lists the blesend receivers advertising near an adapter, without connecting to any
/// (`blesend scan`): a scan by bluetoothd for LE devices, with no UUID filter (a receiver with
/// private discovery or pairing advertises service data instead of the UUID list, and
/// bluetoothd's UUID filter matches lists only), for a set time.
///
/// Like a sender's scan (`GattCentral.discover`) it forgets stale device objects first, so that
/// what it reports comes from advertisements seen now, and restarts the scan every
/// `GattCentral.scanRestart`. Discovery is stopped on every exit path; should the process die
/// instead, bluetoothd stops it when our connection leaves the bus.
public enum ReceiverSurvey {
    /// Scans on `adapter` ("hci1"; nil: BlueZ's first adapter) for `duration`, and returns every
    /// receiver reported meanwhile, in device path order, with the last values reported.
    /// `bus`: a connection to use (the system bus if nil; one made here is closed here).
    public static func take(adapter: String?, duration: Duration, bus: DBusConnection? = nil) async throws(BlueZError) -> [NearbyReceiver] {
        let connection: DBusConnection
        if let bus { connection = bus } else { connection = try await BlueZAdapter.systemBus() }
        do throws(BlueZError) {
            let adapterPath = try await BlueZAdapter.resolve(connection, name: adapter)
            let receivers = try await scan(connection, adapterPath: adapterPath, duration: duration)
            if bus == nil { await connection.close() }
            return receivers
        } catch {
            if bus == nil { await connection.close() }
            throw error
        }
    }

    /// LE devices only; no UUIDs (see above).
    static let filter: [String: DBusValue] = ["Transport": .string("le")]

    /// The devices of one survey, from several tasks.
    private final class Seen: Sendable {
        private let sightings = Mutex(DeviceSightings())
        func knows(_ device: String) -> Bool { sightings.withLock { $0.knows(device) } }
        func merge(_ device: String, _ props: [String: DBusValue]) { sightings.withLock { $0.merge(device, props) } }
        func receivers(adapterPath: String) -> [NearbyReceiver] { sightings.withLock { $0.receivers(adapterPath: adapterPath) } }
    }

    static func scan(_ bus: DBusConnection, adapterPath: String, duration: Duration) async throws(BlueZError) -> [NearbyReceiver] {
        let (added, changed) = try await GattCentral.deviceSignals(bus, adapterPath: adapterPath)
        await GattCentral.forgetStaleDevices(bus, adapterPath: adapterPath)
        let seen = Seen()
        do throws(BlueZError) {
            try await GattCentral.startDiscovery(bus, adapterPath: adapterPath, filter: filter)
        } catch {
            await stopDiscovery(bus, adapterPath: adapterPath)
            throw error
        }
        // Every task but the timer runs until cancelled (or until the bus goes): the timer's end,
        // or the task's cancellation, ends the survey.
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in added {
                    if case .added(let device, let interfaces) = event, let props = interfaces[BlueZ.device] { seen.merge(device, props) }
                }
                return false
            }
            group.addTask {
                for await change in changed {
                    if seen.knows(change.path) {
                        seen.merge(change.path, change.changed)
                    } else if DeviceSightings.isAdvertisement(change.changed),
                              let props = try? await bus.allProperties(destination: BlueZ.service, path: change.path, interface: BlueZ.device) {
                        seen.merge(change.path, props.merging(change.changed) { _, new in new })
                    }
                }
                return false
            }
            group.addTask {
                await GattCentral.keepRestartingDiscovery(bus, adapterPath: adapterPath, filter: filter)
                return false
            }
            group.addTask {
                try? await Task.sleep(for: duration)
                return true
            }
            while let timeUp = await group.next(), !timeUp {}
            group.cancelAll()
        }
        await stopDiscovery(bus, adapterPath: adapterPath)
        return seen.receivers(adapterPath: adapterPath)
    }

    static func stopDiscovery(_ bus: DBusConnection, adapterPath: String) async {
        _ = try? await bus.bluez(adapterPath, BlueZ.adapter, "StopDiscovery", timeout: .seconds(5))
    }
}
