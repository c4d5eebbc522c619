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

    /// Local filter. A well-known sender name is not compared (signals carry the unique name);
    /// the bus already filters by it.
    func matches(_ m: DBusMessage) -> Bool {
        guard m.kind == .signal else { return false }
        if let sender, sender.hasPrefix(":"), m.sender != sender { return false }
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
}
