import BlueZ
import Discovery

/// One line of `blesend scan`: a receiver seen advertising, and what its advertisement says.
struct ScanRow: Equatable {
    let device: String
    let address: String
    let addressType: String?
    let rssi: Int16?
    let mode: AdvertisedMode

    /// The rows to show for `receivers`, strongest first (an unknown RSSI last; ties by address),
    /// and how many were left out as weaker than `minimumRSSI` (an unknown RSSI is kept, as
    /// `blesend send` keeps it).
    static func rows(_ receivers: [NearbyReceiver], reader: AdvertisementReader, minimumRSSI: Int16?) -> (shown: [ScanRow], weaker: Int) {
        var weaker = 0
        var shown: [ScanRow] = []
        for receiver in receivers {
            guard let mode = reader.mode(serviceData: receiver.serviceData, listsService: receiver.listsService) else { continue }
            if let minimumRSSI, let rssi = receiver.rssi, rssi < minimumRSSI {
                weaker += 1
                continue
            }
            shown.append(ScanRow(device: receiver.device, address: receiver.address, addressType: receiver.addressType,
                                 rssi: receiver.rssi, mode: mode))
        }
        return (shown.sorted(by: strongerFirst), weaker)
    }

    static func strongerFirst(_ a: ScanRow, _ b: ScanRow) -> Bool {
        switch (a.rssi, b.rssi) {
        case let (x?, y?) where x != y: x > y
        case (_?, nil): true
        case (nil, _?): false
        default: a.address < b.address
        }
    }
}
