import Keys
import Session
import Sodium
import TestDoubles
import Transfer

/// Fresh endpoints set up from a vector's header alone: its keys, trust store, settings, files
/// and transfer ids.
struct VectorParties {
    let vector: WireVector
    let senderIdentity: Identity
    let receiverIdentity: Identity
    let pinnedKey: PublicKey
    let trust: TrustStore
    let sources: [MemoryFileSource]

    /// The name a receiver's trust store gives every trusted sender (it never goes on the wire).
    static let trustedName = "sender"

    init(_ vector: WireVector) throws(SetupError) {
        self.vector = vector
        senderIdentity = try Self.identity(vector.senderSecret, public: vector.senderPublic, what: "sender")
        receiverIdentity = try Self.identity(vector.receiverSecret, public: vector.receiverPublic, what: "receiver")
        guard let pinned = PublicKey(bytes: vector.pinnedReceiverKey) else { throw SetupError("pinned-receiver-key is not a key") }
        pinnedKey = pinned
        var peers: [TrustStore.Peer] = []
        for bytes in vector.trustedSenders {
            guard let key = PublicKey(bytes: bytes) else { throw SetupError("a trusted-sender is not a key") }
            peers.append(TrustStore.Peer(name: Self.trustedName, key: key))
        }
        trust = TrustStore(peers: peers)
        var sources: [MemoryFileSource] = []
        for file in vector.files {
            // A sender offers names as Swift strings: a name that is not UTF-8 cannot be offered by this implementation.
            guard let name = String(validating: file.name, as: UTF8.self) else { throw SetupError("a file name is not UTF-8") }
            sources.append(MemoryFileSource(name: name, bytes: file.contents))
        }
        self.sources = sources
    }

    /// A sender that offers the vector's files and draws its transfer ids from `ids`.
    func makeSender(ids: TransferIDQueue) -> SenderSession {
        let extensions = vector.configuration.extensions
        return SenderSession(identity: senderIdentity, receiverKey: pinnedKey, files: sources,
                             configuration: vector.configuration.session, compresses: extensions.contains(.compression),
                             pipelines: extensions.contains(.pipelining), makeTransferID: { ids.next() })
    }

    /// A receiver that lists and grants the vector's extensions (with `firstContact`, its user
    /// accepts an unknown sender at once: `VectorReceiver`; with `notTrusted`, it tells an unknown
    /// sender so in message 2).
    func makeReceiver(store: MemoryFileStore) -> VectorReceiver {
        let extensions = vector.configuration.extensions
        return VectorReceiver(session: ReceiverSession(
            identity: receiverIdentity, trust: trust, store: store,
            configuration: vector.configuration.session, maxFileSize: vector.configuration.maxFileSize,
            decompresses: extensions.contains(.compression), asksAboutStrangers: extensions.contains(.firstContact),
            provesKeyToStrangers: extensions.contains(.notTrusted)))
    }

    /// The files the receiver should end up holding, by name.
    var storedFiles: [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for (file, source) in zip(vector.files, sources) where file.stored { files[source.name] = file.contents }
        return files
    }

    private static func identity(_ secret: [UInt8], public expected: [UInt8], what: String) throws(SetupError) -> Identity {
        let identity: Identity
        do {
            identity = try Identity(secretKey: SecureBytes(copying: secret))
        } catch {
            throw SetupError("\(what)-secret is not a usable key: \(error)")
        }
        guard identity.publicKey.bytes == expected else { throw SetupError("\(what)-public does not belong to \(what)-secret") }
        return identity
    }
}
