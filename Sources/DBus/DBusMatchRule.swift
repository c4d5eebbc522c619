/// A signal match rule: sent to the bus with `AddMatch`, and applied locally to route signals to streams.
public struct DBusMatchRule: Sendable, Equatable {
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: String?
    public var pathNamespace: String?
    public var arg0: String?

    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: String? = nil, pathNamespace: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    func validate() throws(DBusError) {
        if let sender { try DBusNames.check(sender, .busName) }
        if let interface { try DBusNames.check(interface, .interface) }
        if let member { try DBusNames.check(member, .member) }
        if let path { try DBusNames.check(path, .objectPath) }
        if let pathNamespace { try DBusNames.check(pathNamespace, .objectPath) }
        if let arg0, arg0.contains("'") || arg0.utf8.contains(0) { throw DBusError.invalidValue(DBusProblem(.quoteInMatchArgument, "arg0 with a quote")) }
    }

    /// The textual rule for `org.freedesktop.DBus.AddMatch`.
    public var ruleString: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        if let path { parts.append("path='\(path)'") }
        if let pathNamespace, pathNamespace != "/" { parts.append("path_namespace='\(pathNamespace)'") }
        if let arg0 { parts.append("arg0='\(arg0)'") }
        return parts.joined(separator: ",")
    }

    /// The bus driver's name: the sender of the bus's own signals (`NameOwnerChanged`), which no
    /// client can own.
    public static let busDriver = "org.freedesktop.DBus"

    /// Local filter. Any client may send any signal, to everyone or to us alone (a unicast signal
    /// reaches us whatever our rules say), so the sender is always compared: a unique name as it
    /// is, the bus driver's name as it is (the bus stamps it), and any other well-known name by
    /// the unique name that owns it now (`owners`; nobody owning it matches nothing).
    func matches(_ m: DBusMessage, owners: [String: String]) -> Bool {
        guard m.kind == .signal else { return false }
        if let sender {
            let expected = sender.hasPrefix(":") || sender == Self.busDriver ? sender : owners[sender]
            guard let expected, m.sender == expected else { return false }
        }
        if let interface, m.interface != interface { return false }
        if let member, m.member != member { return false }
        if let path, m.path != path { return false }
        if let ns = pathNamespace, ns != "/" {
            guard let p = m.path, p == ns || p.hasPrefix(ns + "/") else { return false }
        }
        if let arg0 {
            guard m.arguments.first?.string == arg0 else { return false }
        }
        return true
    }

    /// The well-known name whose owner must have sent a matching signal, if the rule names one.
    var followedName: String? {
        guard let sender, !sender.hasPrefix(":"), sender != Self.busDriver else { return nil }
        return sender
    }

    /// The rule that has the bus send us a name's changes of owner.
    static func ownerChanges(of name: String) -> DBusMatchRule {
        DBusMatchRule(sender: busDriver, interface: busDriver, member: "NameOwnerChanged", arg0: name)
    }
}
