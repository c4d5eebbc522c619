import Keys
import Pairing

/// Pairing's last step on either machine: the peer's key written into a directory of `NAME.pub`
/// files (the receiver's trust directory, the sender's address book), under a free name.
enum PinnedKeys {
    struct Pinned: Equatable {
        let name: String
        let path: String
        /// The key was there already (an earlier pairing whose last message was lost).
        let existed: Bool
    }

    /// Pins `key` in `directory` under `name` if the user chose it (`chosen`, checked free before
    /// pairing: `checkFree`), else under the peer's `suggested` name, or `suggested-2`, `-3` ...
    /// when another key holds that one. A key already there keeps its name.
    static func pin(_ key: PublicKey, chosen: String?, suggested: String, in directory: NamedKeyDirectory) throws(KeyError) -> Pinned {
        let present = try directory.entries()
        if let holder = present.first(where: { $0.key == key }) {
            return Pinned(name: holder.name, path: directory.filePath(holder.name), existed: true)
        }
        var name = chosen ?? usableName(suggested)
        if chosen == nil {
            let taken = Set(present.map(\.name))
            let base = name
            var number = 2
            while taken.contains(name) {
                name = "\(base)-\(number)"
                number += 1
            }
        }
        return Pinned(name: name, path: try directory.add(key, name: name), existed: false)
    }

    /// Before pairing: `name`, chosen by the user, is free in `directory`; refused with the
    /// commands that free it otherwise (the other side must not pin us for nothing).
    static func checkFree(_ name: String, in directory: NamedKeyDirectory) throws(KeyError) {
        guard try directory.key(named: name) != nil else { return }
        throw KeyError(.nameTaken, "the name \"\(name)\" is taken in \(directory.path)",
                       hint: "pick another --name, or free it first: \(directory.command("rename \(name) \(name)-old")) or \(directory.command("remove \(name)"))")
    }

    /// `name` cut to the bytes and length a pairing name may have (`PairingName`; "peer" if nothing
    /// is left).
    static func usableName(_ name: String) -> String {
        let kept = name.utf8.filter(PairingName.isNameByte).prefix(PairingLayout.maxNameLength).drop { $0 == UInt8(ascii: ".") }
        return kept.isEmpty ? "peer" : String(decoding: kept, as: UTF8.self)
    }
}
