#if canImport(Glibc)
import Glibc
#endif
import Keys

/// Pairing's last step on either machine: the peer's key written into a directory of `NAME.pub`
/// files (the receiver's trust directory, the sender's address book), under a free name.
enum PinnedKeys {
    struct Pinned: Equatable {
        let name: String
        let path: String
        /// The key was there already (an earlier pairing whose last message was lost).
        let existed: Bool
    }

    /// Pins `key` in `directory` (made 0700 if missing) under `suggested`, or `suggested-2`,
    /// `-3` ... when another key holds that name; a key already there keeps its name.
    static func pin(_ key: PublicKey, suggested: String, directory: String) throws(KeyError) -> Pinned {
        makeDirectory(directory)
        let store = try TrustStore.load(directory: directory)
        if let name = store.name(for: key.bytes) {
            return Pinned(name: name, path: directory + "/" + name + ".pub", existed: true)
        }
        let taken = Set(store.peers.map(\.name))
        let base = usableName(suggested)
        var name = base
        var number = 2
        while taken.contains(name) {
            name = "\(base)-\(number)"
            number += 1
        }
        let path = try TrustStore.add(key, name: name, directory: directory)
        return Pinned(name: name, path: path, existed: false)
    }

    /// `name` cut to the characters and length a peer name may have ("peer" if nothing is left).
    static func usableName(_ name: String) -> String {
        let kept = name.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }
        var text = String(String.UnicodeScalarView(kept.prefix(32)))
        while text.hasPrefix(".") { text.removeFirst() }
        return text.isEmpty ? "peer" : text
    }

    /// Makes `directory` and its missing parents, the last one 0700 (it says whom this machine trusts).
    static func makeDirectory(_ directory: String) {
        var path = directory.hasPrefix("/") ? "" : "."
        let parts = directory.split(separator: "/").map(String.init)
        for (index, part) in parts.enumerated() {
            path += "/" + part
            _ = mkdir(path, index == parts.count - 1 ? 0o700 : 0o755)
        }
    }
}
