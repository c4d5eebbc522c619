import Keys

/// What `blerecv trust` and `blesend receivers` do to their directory of named keys
/// (`NamedKeyDirectory`), and what they say about it. Names come from files on disk: shown safe.
struct NamedKeyActions {
    let directory: NamedKeyDirectory

    /// "blerecv" or "blesend".
    var tool: String { String(directory.kind.command.prefix { $0 != " " }) }

    private var isTrust: Bool { directory.kind == .trustedSenders }

    func add(_ keyArgument: String, name: String) throws(CLIError) {
        do throws(KeyError) {
            let key = try KeyArgument.publicKey(keyArgument)
            let before = try? directory.key(named: name)
            let path = try directory.add(key, name: name)
            let who = "\(TerminalText.sanitized(name)) (fingerprint \(key.fingerprint))"
            if before == key {
                Console.err("\(tool): \(isTrust ? "already trusting" : "already have receiver") \(who): \(TerminalText.sanitized(path))\n")
            } else if isTrust {
                Console.err("\(tool): trusting \(who): wrote \(TerminalText.sanitized(path)); a running blerecv accepts it from its next handshake\n")
            } else {
                Console.err("\(tool): added receiver \(who): wrote \(TerminalText.sanitized(path)); send to it with: blesend --to \(KeyDirectoryLocation.shellWord(name)) FILE\n")
            }
        } catch {
            throw CLIError(error)
        }
    }

    func list(json: Bool) throws(CLIError) {
        let peers: [TrustStore.Peer]
        do { peers = try directory.entries() } catch { throw CLIError(error) }
        for peer in peers {
            let path = directory.filePath(peer.name)
            if json {
                Console.out(JSONLine(isTrust ? "trusted" : "receiver", [
                    ("name", .string(peer.name)), ("fingerprint", .string(peer.key.fingerprint)), ("key", .string(peer.key.text)),
                    ("path", .string(path)),
                ]).text + "\n")
            } else {
                Console.out("\(TerminalText.sanitized(peer.name))  \(peer.key.fingerprint)  \(TerminalText.sanitized(path))\n")
            }
        }
        if peers.isEmpty && !json {
            Console.err("\(tool): no \(directory.kind.entry)s in \(TerminalText.sanitized(directory.path)); add one with: \(directory.command("add KEY --name NAME"))\n")
        }
    }

    func remove(_ words: [String]) throws(CLIError) {
        let target = words.joined(separator: " ")
        do throws(KeyError) {
            let removed = try directory.remove(target)
            for peer in removed {
                let after = isTrust ? "; a running blerecv refuses it from its next handshake" : ""
                Console.err("\(tool): removed \(TerminalText.sanitized(peer.name)) (fingerprint \(peer.key.fingerprint)): \(TerminalText.sanitized(directory.filePath(peer.name)))\(after)\n")
            }
            // The same key under another name (a copied file) is still there.
            let keys = Set(removed.map(\.key))
            for other in try directory.entries() where keys.contains(other.key) {
                Console.err("\(tool): warning: the same key is still there as \(TerminalText.sanitized(other.name)); remove it too with: \(directory.command("remove \(KeyDirectoryLocation.shellWord(other.name))"))\n")
            }
        } catch {
            throw CLIError(error)
        }
    }

    func rename(_ old: String, to new: String) throws(CLIError) {
        do throws(KeyError) {
            let path = try directory.rename(old, to: new)
            Console.err("\(tool): renamed \(TerminalText.sanitized(old)) to \(TerminalText.sanitized(new)): \(TerminalText.sanitized(path))\n")
        } catch {
            throw CLIError(error)
        }
    }
}
