import DBus
import L2CAP
import Pipeline

/// The sender side: finds a receiver advertising the transfer service (`GattCentral+Scan`),
/// connects (`GattCentral+Link`), and returns the connection over the transport `transport` asks
/// for (`TransportChoice.table`: an L2CAP channel where the receiver publishes a PSM, else the GATT
/// link). Discovery is stopped, and the device disconnected, on every exit path.
public enum GattCentral {
    /// How long an L2CAP channel may take to open before `auto` falls back to GATT.
    public static let l2capTimeout: Duration = .seconds(3)

    /// Scans on `radio.adapter` for up to `scanTime` (default `radio.scanTimeout`), connects to the
    /// first receiver found (skipping ones whose RSSI is known and below `radio.minimumRSSI`; an
    /// absent RSSI is treated as unknown and accepted) and opens the transport `radio.transport` asks for.
    /// `excluding` lists device paths not to connect to again (receivers that failed the handshake);
    /// their links must be gone before another device is connected (`waitForLinksToEnd`). `known`
    /// lists receivers seen advertising earlier in this run: their objects are kept for this scan.
    /// `recognises` judges private-discovery data (docs/protocol.md §1.1): a receiver that lists
    /// this sender is tried first, one that does not is never tried, and if only such receivers
    /// are seen for `notListedPatience` the scan ends with `notListed`. `onlyListed`: only a
    /// receiver whose data `recognises` says yes to is a candidate (a pairing sender).
    public static func connect(
        _ radio: RadioOptions, scanTime: Duration? = nil, excluding: Set<String> = [], known: Set<String> = [], bus: DBusConnection? = nil,
        recognises: (@Sendable ([UInt8]) -> Bool?)? = nil, onlyListed: Bool = false, progress: @escaping @Sendable (ConnectStep) -> Void = { _ in }
    ) async throws(BlueZError) -> PeerConnection {
        let connection: DBusConnection
        if let bus { connection = bus } else { connection = try await BlueZAdapter.systemBus() }
        let ownsBus = bus == nil
        do throws(BlueZError) {
            let adapterPath = try await BlueZAdapter.resolve(connection, name: radio.adapter)
            let deadline = ContinuousClock.now + (scanTime ?? radio.scanTimeout)
            var attempts = 0
            while true {
                let (device, others) = try await discover(
                    connection, adapterPath: adapterPath, timeout: max(.seconds(1), deadline - .now), minimumRSSI: radio.minimumRSSI,
                    excluding: excluding, known: known, recognises: recognises, onlyListed: onlyListed)
                progress(.found(device: device))
                await waitForLinksToEnd(connection, adapterPath: adapterPath, refused: excluding, before: device)
                if let failure = try await requestLink(connection, device: device) {
                    attempts += 1
                    guard attempts <= maxConnectAttemptRetries, ContinuousClock.now < deadline else { throw failure.error }
                    progress(.connectAttemptFailed(failure))
                    continue
                }
                return try await open(connection, adapterPath: adapterPath, device: device, transport: radio.transport,
                                      otherReceivers: others, ownsBus: ownsBus, progress: progress)
            }
        } catch {
            if ownsBus { await connection.close() }
            throw error
        }
    }

    /// Asks bluetoothd for an LE link to `device` (after the previous sender's link to it is
    /// gone). A failure another scan can mend is returned, after cancelling bluetoothd's attempt;
    /// any other is thrown.
    private static func requestLink(_ bus: DBusConnection, device: String) async throws(BlueZError) -> ConnectAttemptFailure? {
        await waitForEarlierDisconnect(bus, device: device)
        do {
            _ = try await bus.bluez(device, BlueZ.device, "Connect", timeout: connectPatience)
            return nil
        } catch {
            _ = try? await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(10))
            guard let failure = ConnectAttemptFailure(error) else { throw error }
            return failure
        }
    }

    /// Opens the transport `transport` asks for (`TransportChoice.table`) on the LE link
    /// `requestLink` made. On failure the link is ended, unless another program on this machine
    /// holds the transfer characteristic (it uses this very link).
    private static func open(
        _ bus: DBusConnection, adapterPath: String, device: String, transport: TransportChoice, otherReceivers: Set<String>,
        ownsBus: Bool, progress: @escaping @Sendable (ConnectStep) -> Void
    ) async throws(BlueZError) -> PeerConnection {
        do throws(BlueZError) {
            try await waitForServices(bus, device: device)
            // On a link that was just re-established (the receiver's adapter or bluetoothd came back),
            // ServicesResolved can be true while the characteristics are still being exported: give
            // them a moment before concluding the peer has none.
            let charPath = try await transferCharacteristic(bus, device: device, patience: .seconds(5))
            progress(.servicesResolved)
            let extensions = BlesendGATT.extensions(
                fromValue: await readServiceValue(bus, transferCharacteristic: charPath, uuid: BlesendGATT.extensionsCharacteristicUUID))
            let link = CentralLink(bus: bus, adapterPath: adapterPath, device: device, transferCharacteristic: charPath, ownsBus: ownsBus)
            let (opened, fallback) = try await transport.open(on: link)
            return PeerConnection(transport: opened.transport, device: device, l2capFallback: fallback, receiverExtensions: extensions,
                                  otherReceivers: otherReceivers, cleanup: opened.cleanup)
        } catch {
            if case .characteristicBusy = error { throw error }
            _ = try? await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(10))
            throw error
        }
    }


    /// How long `Device1.Connect` may take. A receiver seen advertising a moment ago answers a
    /// connection request at its next connectable advertisement, well within a second on a usable
    /// link; bluetoothd itself waits far longer (it returns when the kernel gives up).
    static let connectPatience: Duration = .seconds(15)

    /// How many times a failed `Device1.Connect` (`ConnectAttemptFailure`) is followed by a new
    /// scan and another attempt, within the scan's time.
    static let maxConnectAttemptRetries = 2
}
