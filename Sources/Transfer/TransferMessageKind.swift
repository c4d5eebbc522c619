extension TransferMessage {
    /// The type byte: which message this is.
    public enum Kind: UInt8, Sendable, CustomStringConvertible {
        case offer = 1, accept, data, ack, done, confirm, reject, bye, hello, zdata, folder, entry, commit, batch, pending, busy, notTrusted

        /// The receiver's answers that stand only in handshake message 2, in place of the answer
        /// to the opening (§8.5-8.7): never in a record, never in a `batch`.
        public static let messageTwoOnly: Set<Kind> = [.pending, .busy, .notTrusted]

        public var description: String {
            switch self {
            case .offer: "offer"
            case .accept: "accept"
            case .data: "data"
            case .ack: "ack"
            case .done: "done"
            case .confirm: "confirm"
            case .reject: "reject"
            case .bye: "bye"
            case .hello: "hello"
            case .zdata: "zdata"
            case .folder: "folder"
            case .entry: "entry"
            case .commit: "commit"
            case .batch: "batch"
            case .pending: "pending"
            case .busy: "busy"
            case .notTrusted: "notTrusted"
            }
        }
    }

    public var kind: Kind {
        switch self {
        case .offer: .offer
        case .accept: .accept
        case .data: .data
        case .ack: .ack
        case .done: .done
        case .confirm: .confirm
        case .reject: .reject
        case .bye: .bye
        case .hello: .hello
        case .zdata: .zdata
        case .folder: .folder
        case .entry: .entry
        case .commit: .commit
        case .batch: .batch
        case .pending: .pending
        case .busy: .busy
        case .notTrusted: .notTrusted
        }
    }
}
