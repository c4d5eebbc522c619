/// The transfer messages a handshake message carries after its fixed fields (docs/protocol.md §3,
/// §8): an optional `hello` (5 bytes), then exactly one other message, which runs to the end.
public enum HandshakePayload {
    /// Appends `messages` (a `hello` first, if any) to `out`.
    public static func encode(_ messages: [TransferMessage], into out: inout [UInt8]) {
        for message in messages { message.encode(into: &out) }
    }

    /// The messages in `bytes`: `[hello, message]` or `[message]`. Which messages may stand where
    /// is for the transfer layer to judge.
    public static func decode(_ bytes: some Collection<UInt8>) throws(TransferMessageError) -> [TransferMessage] {
        let helloLength = 5
        let array = Array(bytes)
        guard array.first == TransferMessage.Kind.hello.rawValue, array.count > helloLength else {
            return [try TransferMessage(decoding: array)]
        }
        return [try TransferMessage(decoding: array.prefix(helloLength)), try TransferMessage(decoding: array.dropFirst(helloLength))]
    }
}
