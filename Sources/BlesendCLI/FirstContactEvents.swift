import Session

/// The `first-contact` event of `--json` (docs/json-events.md) on either side.
extension JSONLine {
    /// blerecv: the user is asked about an unknown sender. Without the code: the user must read it
    /// off the sender and type it (docs/protocol.md §8.5).
    static func firstContact(_ request: ApprovalRequest) -> JSONLine {
        JSONLine("first-contact", [
            ("fingerprint", .string(request.fingerprint)),
            ("name", .string(request.offered.name)), ("bytes", .of(request.offered.size)),
        ])
    }

    /// blesend: the receiver's user is asked about us; `peer` is the receiver's name.
    static func firstContact(peer: String, code: String) -> JSONLine {
        JSONLine("first-contact", [("peer", .string(peer)), ("code", .string(code))])
    }
}
