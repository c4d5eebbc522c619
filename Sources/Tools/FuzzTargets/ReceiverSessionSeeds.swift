import Framing
import Handshake
import MemoryTransport
import Simulation
import Pipeline
import Record
import Session
import Sodium
import Transfer

/// `receiver-session`: a whole `ReceiverSession` (link, handshake, records, transfer layer, file
/// store) driven by a peer, before and after authentication.
///
/// Input: a mode byte, then operations.
/// - mode 0: raw datagrams (one-byte length);
/// - mode 1: raw messages (two-byte length), framed by an honest link, so message 1 is exactly the
///   fuzzer's bytes;
/// - mode 2: a genuine message 1 from a sender the receiver does not trust, with a fuzzed payload;
/// - mode 3: a genuine message 1 from the trusted sender with a fuzzed payload (timestamp and opening
///   offer), then records the sender seals: `0` a transfer-message plaintext (bit 2: final record),
///   `1` a raw message, `2` time passes, `3` a raw datagram.
/// Bit 2 of the mode byte picks the datagram size (20 or 182 bytes). Bit 3 makes the receiver ask
/// about strangers (`blerecv --ask`, first contact, protocol.md §8.5): in mode 2, a stranger whose
/// message 1 asks for `firstContact` is then told `pending`, and the next input byte is its user's
/// answer (bit 0: yes, under `FixedKeys.approvedName`), followed by records as in mode 3.
///
/// Invariants:
/// - **no file is created from unauthenticated input**: the file store traps on `begin` unless the
///   first message of the connection is a genuine message 1 from the trusted sender (byte for byte
///   what that sender writes; a shadow link reassembles the same datagrams to tell), or the
///   receiver's user accepted a stranger, and then only for that sender's name; no `authenticated`
///   or transfer event comes without it, and no question about a sender from a receiver that does
///   not ask;
/// - bounded memory: a file never holds more than its offer announced nor more than `maxFileSize`;
///   at most one temporary file per connection, at most 4 folders being built (extension
///   `folders`: the store takes folders too); the link's reorder buffer stays under its window;
/// - a committed file's content hashes to the hash the sender sent in `done`;
/// - after `shutdown` no temporary file and no folder being built is left.
// The receiver-session target's seeds (ReceiverSessionTarget.swift describes the input format).

func receiverSessionSeeds() -> [FuzzSeed] {
    let id = TransferID(halves: (0x0123_4567_89AB_CDEF, 0x0F1E_2D3C_4B5A_6978))
    let content = Array("hello, fuzzer\n".utf8)
    let hash = BLAKE2b.hash(content, outputLength: 32)
    let payload = openingPayload(timestamp: 1_700_000_000_000_000_000, name: "report.pdf", size: UInt64(content.count))

    func trusted(_ datagramSizeBit: UInt8, _ conversation: [TransferMessage], opening: [UInt8]? = nil) -> [UInt8] {
        var builder = FuzzInputBuilder()
        builder.byte(ReceiverSessionMode.trustedHandshake.rawValue | datagramSizeBit)
        builder.chunk16(opening ?? payload)
        for message in conversation {
            builder.byte(message == .bye ? 4 : 0)
            builder.chunk(message.encoded())
        }
        return builder.bytes
    }

    // Extensions (protocol.md §8): a hello asking for every one, then a folder's top as the opening.
    let tree = TransferID(halves: (0x7777_7777_7777_7777, 0x0000_0000_0000_0001))
    let entry = TransferID(halves: (0x1111_1111_1111_1111, 0x0000_0000_0000_0002))
    let subfolder = TransferID(halves: (0x2222_2222_2222_2222, 0x0000_0000_0000_0003))
    var folderOpening: [UInt8] = []
    folderOpening.appendBigEndian(UInt64(1_700_000_000_000_000_000))
    HandshakePayload.encode([.hello(.known), .folder(id: id, tree: tree, path: Array("album".utf8))], into: &folderOpening)

    // Raw datagrams: the sender's side of a real handshake at a small datagram size.
    var raw = FuzzInputBuilder()
    raw.byte(ReceiverSessionMode.rawDatagrams.rawValue)
    var link = ReliableLink(configuration: SessionConfiguration().link, maxDatagramSize: 20)
    try? link.send(message: genuineMessage1(from: FixedKeys.trustedSender, payload: payload))
    while let datagram = link.nextDatagram(now: .zero) { raw.chunk(datagram) }

    var rawMessage = FuzzInputBuilder()
    rawMessage.byte(ReceiverSessionMode.rawMessages.rawValue | 4)
    rawMessage.chunk16(genuineMessage1(from: FixedKeys.trustedSender, payload: payload))

    var stranger = FuzzInputBuilder()
    stranger.byte(ReceiverSessionMode.strangerHandshake.rawValue | 4)
    stranger.chunk16(payload)

    // First contact: a stranger asking for it, a receiver that asks; its user says yes or no.
    var firstContactOpening: [UInt8] = []
    firstContactOpening.appendBigEndian(UInt64(1_700_000_000_000_000_000))
    HandshakePayload.encode([.hello(.firstContact), .offer(.init(id: id, size: UInt64(content.count), name: "report.pdf"))],
                            into: &firstContactOpening)
    func firstContact(yes: Bool) -> [UInt8] {
        var builder = FuzzInputBuilder()
        builder.byte(ReceiverSessionMode.strangerHandshake.rawValue | 4 | 8)
        builder.chunk16(firstContactOpening)
        builder.byte(yes ? 1 : 0)
        for message: TransferMessage in [.data(content), .done(id: id, hash: hash), .bye] {
            builder.byte(message == .bye ? 4 : 0)
            builder.chunk(message.encoded())
        }
        return builder.bytes
    }

    return [
        FuzzSeed("raw-datagrams-message1", raw.bytes),
        FuzzSeed("raw-message1", rawMessage.bytes),
        FuzzSeed("stranger", stranger.bytes),
        FuzzSeed("first-contact-accepted", firstContact(yes: true)),
        FuzzSeed("first-contact-declined", firstContact(yes: false)),
        FuzzSeed("trusted-whole-file", trusted(4, [.data(content), .done(id: id, hash: hash), .bye])),
        FuzzSeed("trusted-small-datagrams", trusted(0, [.data(Array(content.prefix(5))), .data(Array(content.dropFirst(5))),
                                                       .done(id: id, hash: hash), .bye])),
        FuzzSeed("trusted-bad-hash", trusted(4, [.data(content), .done(id: id, hash: [UInt8](repeating: 0, count: 32)), .bye])),
        FuzzSeed("trusted-too-much-data", trusted(4, [.data(content + content)])),
        FuzzSeed("trusted-folder-pipelined", trusted(4, [
            .batch([.entry(.init(id: entry, tree: tree, size: UInt64(content.count), executable: true, path: Array("album/a.txt".utf8))),
                    .data(content), .done(id: entry, hash: hash)]),
            .folder(id: subfolder, tree: tree, path: Array("album/empty".utf8)),
            .commit(tree: tree), .bye,
        ], opening: folderOpening)),
    ]
}
