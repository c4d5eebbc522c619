import Testing
@testable import BlueZ

/// `TransportChoice.table`: one row per transport; `auto` starts at the preferred one and follows
/// the rows' fallbacks, an explicit choice uses its row alone.
@Suite("Transport table")
struct TransportTableTests {
    @Test func everyChoiceButAutoHasARow() {
        for choice in TransportChoice.allCases where choice != .auto {
            #expect(TransportChoice.table[choice] != nil, "\(choice)")
        }
        #expect(TransportChoice.table[.auto] == nil)
    }

    @Test func autoTriesL2CAPThenGATTAndAnExplicitChoiceOnlyItself() {
        #expect(TransportChoice.auto.transports == [.l2cap, .gatt])
        #expect(TransportChoice.l2cap.transports == [.l2cap])
        #expect(TransportChoice.gatt.transports == [.gatt])
    }

    @Test func aTransportNotOfferedSaysSo() {
        #expect(TransportChoice.table[.l2cap]?.notOffered == .l2capNotOffered)
        #expect(TransportChoice.table[.gatt]?.fallback == nil, "the chain ends")
    }
}
