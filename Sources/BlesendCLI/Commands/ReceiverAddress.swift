#if canImport(Glibc)
import Glibc
#endif
import Keys

/// What `blesend --to` names: a receiver's key and the name shown for it. In this order:
///
/// 1. the key text itself (`blesend-pub1:…`, as pasted): shown as "receiver";
/// 2. a name in the address book (`blesend receivers`), when it is a plain name without `.pub`:
///    shown by that name (a file of the same name in the current folder is `./NAME`);
/// 3. a `.pub` file (any path that exists): shown by its base name;
/// 4. anything else is an error that points to `blesend receivers list`.
enum ReceiverAddress {
    static func resolve(_ argument: String, book: NamedKeyDirectory) throws(KeyError) -> (key: PublicKey, name: String) {
        if argument.contains("blesend-pub1:") || argument.contains("blesend-sec1:") {
            return (try KeyFile.resolvePublicKey(argument), "receiver")
        }
        var status = stat()
        let exists = stat(argument, &status) == 0
        if NamedKeyDirectory.isUsableName(argument) && !argument.hasSuffix(".pub") {
            do {
                if let key = try book.key(named: argument) { return (key, argument) }
            } catch where !exists {
                throw error
            } catch {
                // An unusable address book does not stop a file of that name being used.
            }
            if !exists {
                throw KeyError(.unknownName, "no receiver called \"\(argument)\" in your address book (\(book.path)), and no file of that name",
                               hint: "see the names with: blesend receivers list   (add one with: blesend receivers add KEY --name \(argument))")
            }
        }
        guard exists else {
            throw KeyError(.badEncoding, "\(argument) is neither a public key (blesend-pub1:…), a .pub file, nor a receiver's name",
                           hint: "see the names with: blesend receivers list")
        }
        return (try KeyFile.loadPublicKey(path: argument), peerName(argument))
    }

    /// A name for the receiver of a .pub file: its base name, or "receiver".
    static func peerName(_ argument: String) -> String {
        guard argument.hasSuffix(".pub"), let base = argument.split(separator: "/").last else { return "receiver" }
        return String(base.dropLast(4))
    }
}
