import Session
import Pipeline

/// One wire-format test vector: the fixed inputs of a whole session between a sender and a
/// receiver, every datagram that crossed the link in either direction with its virtual time, and
/// how the session ended. Tests/Vectors/blesend/README.md describes the text form.
public struct WireVector: Equatable, Sendable {
    /// The header's comment lines, in order (the first says what the vector is).
    public var comments: [String]
    public var expect: Expectation
    public var configuration: VectorConfiguration
    /// X25519 secret keys of the two parties.
    public var senderSecret: [UInt8]
    public var receiverSecret: [UInt8]
    /// The public keys that go with them (written out for readers; a loader checks them).
    public var senderPublic: [UInt8]
    public var receiverPublic: [UInt8]
    /// The receiver key the sender pinned (normally `receiverPublic`).
    public var pinnedReceiverKey: [UInt8]
    /// The sender keys in the receiver's trust store.
    public var trustedSenders: [[UInt8]]
    /// One per link, in order.
    public var connections: [Connection]
    /// The transfer ids the sender draws, in order (one per file it offers).
    public var transferIDs: [[UInt8]]
    public var files: [File]
    public var events: [Event]

    public init(comments: [String], expect: Expectation, configuration: VectorConfiguration,
                senderSecret: [UInt8], receiverSecret: [UInt8], senderPublic: [UInt8], receiverPublic: [UInt8],
                pinnedReceiverKey: [UInt8], trustedSenders: [[UInt8]], connections: [Connection],
                transferIDs: [[UInt8]], files: [File], events: [Event]) {
        self.comments = comments
        self.expect = expect
        self.configuration = configuration
        self.senderSecret = senderSecret
        self.receiverSecret = receiverSecret
        self.senderPublic = senderPublic
        self.receiverPublic = receiverPublic
        self.pinnedReceiverKey = pinnedReceiverKey
        self.trustedSenders = trustedSenders
        self.connections = connections
        self.transferIDs = transferIDs
        self.files = files
        self.events = events
    }

    /// The two endpoints.
    public enum Side: String, Sendable, CaseIterable {
        case sender, receiver

        public var peer: Side { self == .sender ? .receiver : .sender }
    }

    /// How the session ends.
    public enum Expectation: Equatable, Sendable {
        /// Goodbyes exchanged, the sender finished, the receiver's connection complete.
        case success
        /// `side` raised the error named `code` (see `SessionError.vectorCode`), on its last input in the log.
        case failure(code: String, raisedBy: Side)
    }

    /// The inputs of one link.
    public struct Connection: Equatable, Sendable {
        /// Nanoseconds since the Unix epoch that both endpoints are handed at connection time
        /// (the sender's is the timestamp in message 1).
        public var wallClock: UInt64
        /// Largest datagram each side sends (GATT: writes `MTU - 3`, notifications `MTU - 5`).
        public var senderDatagramSize: Int
        public var receiverDatagramSize: Int
        /// The ephemeral X25519 secret keys of this link's handshake.
        public var senderEphemeral: [UInt8]
        public var receiverEphemeral: [UInt8]
        /// The receiver is at its cap on this link: it answers a sender that asks for `busy` with
        /// this (docs/protocol.md §8.6) instead of serving it. Nil for a receiver with a free slot.
        public var receiverBusy: BusyAnswer?

        public init(wallClock: UInt64, senderDatagramSize: Int, receiverDatagramSize: Int,
                    senderEphemeral: [UInt8], receiverEphemeral: [UInt8], receiverBusy: BusyAnswer? = nil) {
            self.wallClock = wallClock
            self.senderDatagramSize = senderDatagramSize
            self.receiverDatagramSize = receiverDatagramSize
            self.senderEphemeral = senderEphemeral
            self.receiverEphemeral = receiverEphemeral
            self.receiverBusy = receiverBusy
        }
    }

    /// One file the sender offers, in order.
    public struct File: Equatable, Sendable {
        /// The offered name, as UTF-8 bytes.
        public var name: [UInt8]
        public var contents: [UInt8]
        /// Whether the receiver ends up holding it (under its offered name).
        public var stored: Bool

        public init(name: [UInt8], contents: [UInt8], stored: Bool) {
            self.name = name
            self.contents = contents
            self.stored = stored
        }
    }

    /// One line of the log.
    public struct Event: Equatable, Sendable {
        public var time: Instant
        public var kind: Kind

        public init(time: Instant, kind: Kind) {
            self.time = time
            self.kind = kind
        }

        public enum Kind: Equatable, Sendable {
            /// Connection `number` (1-based) comes up: the sender connects, the receiver accepts.
            case connect(number: Int)
            case datagram(Route, [UInt8])
            /// The clock moved to the earliest deadline; both run their timers (sender first).
            /// The flags say whose `nextDeadline` it was.
            case tick(senderDue: Bool, receiverDue: Bool)
            /// The link drops: both are told.
            case cut
        }
    }
}
