import CBluetooth
import Glibc

/// The system calls of an LE L2CAP socket, on one descriptor (non-blocking, close-on-exec).
/// Owns nothing: `L2CAPListener` and `L2CAPChannel` close what they hold.
enum L2CAPSocket {
    /// A new LE L2CAP socket (`AF_BLUETOOTH`, `SOCK_SEQPACKET`, `BTPROTO_L2CAP`) bound to `address`
    /// and `psm` (0: the kernel picks one), with the link's own security off (`BT_SECURITY_LOW`:
    /// blesend's security is its own, above) and our receive MTU. The kernel takes `BT_RCVMTU` only
    /// once the socket is bound to an LE address (EINVAL before).
    static func open(boundTo address: BluetoothAddress, psm: UInt16, receiveMTU: Int) throws(L2CAPError) -> Int32 {
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(Int32(BLESEND_AF_BLUETOOTH), type, Int32(BLESEND_BTPROTO_L2CAP))
        guard fd >= 0 else { throw .unavailable(errno: errno) }
        do {
            var security = blesend_bt_security(level: UInt8(BLESEND_BT_SECURITY_LOW), key_size: 0)
            try setOption(fd, Int32(BLESEND_BT_SECURITY), &security, name: "BT_SECURITY")
            try bind(fd, to: address, psm: psm)
            var mtu = UInt16(clamping: receiveMTU)
            try setOption(fd, Int32(BLESEND_BT_RCVMTU), &mtu, name: "BT_RCVMTU")
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    static func bind(_ fd: Int32, to address: BluetoothAddress, psm: UInt16) throws(L2CAPError) {
        var socketAddress = address.socketAddress(psm: psm)
        let result = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<blesend_sockaddr_l2>.size))
            }
        }
        guard result == 0 else { throw .bindFailed(errno: errno) }
    }

    /// Starts connecting (non-blocking): true if already connected, false if in progress.
    static func startConnect(_ fd: Int32, to address: BluetoothAddress, psm: UInt16) throws(L2CAPError) -> Bool {
        var socketAddress = address.socketAddress(psm: psm)
        let result = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<blesend_sockaddr_l2>.size))
            }
        }
        if result == 0 { return true }
        if errno == EINPROGRESS || errno == EAGAIN { return false }
        throw .connectFailed(errno: errno)
    }

    /// The outcome of a non-blocking connect once the socket is writable (`SO_ERROR`).
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    /// The address and PSM a socket is bound to (the PSM the kernel picked for PSM 0).
    static func localAddress(_ fd: Int32) -> blesend_sockaddr_l2? {
        var socketAddress = blesend_sockaddr_l2()
        var length = socklen_t(MemoryLayout<blesend_sockaddr_l2>.size)
        let result = withUnsafeMutablePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? socketAddress : nil
    }

    /// Accepts one waiting connection (non-blocking, close-on-exec): its descriptor and the peer's
    /// address; nil when none is waiting.
    static func accept(_ fd: Int32) throws(L2CAPError) -> (Int32, BluetoothAddress)? {
        var socketAddress = blesend_sockaddr_l2()
        var length = socklen_t(MemoryLayout<blesend_sockaddr_l2>.size)
        let client = withUnsafeMutablePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
        }
        if client >= 0 {
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            return (client, BluetoothAddress(socketAddress: socketAddress))
        }
        let code = errno
        switch AcceptFailure(errno: code) {
        case .nothingWaiting: return nil
        case .outOfResources: throw .outOfResources(errno: code)
        case .fatal: throw .listenFailed(errno: code)
        }
    }

    /// What a failed `accept` means for the listener.
    enum AcceptFailure: Equatable {
        /// Nothing is waiting (or the peer left before it was taken): wait for the next.
        case nothingWaiting
        /// The process or the system is out of descriptors or memory (a storm of channels, say):
        /// the channel waits in the kernel's queue; try again in a moment, never give up for good.
        case outOfResources
        case fatal

        init(errno code: Int32) {
            switch code {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED: self = .nothingWaiting
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: self = .outOfResources
            default: self = .fatal
            }
        }
    }

    /// A `u16` socket option at SOL_BLUETOOTH (`BT_SNDMTU`, `BT_RCVMTU`).
    static func mtuOption(_ fd: Int32, _ option: Int32) -> Int? {
        var value: UInt16 = 0
        var length = socklen_t(MemoryLayout<UInt16>.size)
        guard getsockopt(fd, Int32(BLESEND_SOL_BLUETOOTH), option, &value, &length) == 0 else { return nil }
        return Int(value)
    }

    /// The LE PHY in use each way, from `BT_PHY` ("2M", or "1M/2M" when they differ); nil when the
    /// kernel does not say.
    static func phy(_ fd: Int32) -> String? {
        var bits: UInt32 = 0
        var length = socklen_t(MemoryLayout<UInt32>.size)
        guard getsockopt(fd, Int32(BLESEND_SOL_BLUETOOTH), Int32(BLESEND_BT_PHY), &bits, &length) == 0 else { return nil }
        return phyName(bits)
    }

    static func phyName(_ bits: UInt32) -> String? {
        func name(_ oneM: Int, _ twoM: Int, _ coded: Int) -> String? {
            if bits & UInt32(twoM) != 0 { return "2M" }
            if bits & UInt32(oneM) != 0 { return "1M" }
            if bits & UInt32(coded) != 0 { return "Coded" }
            return nil
        }
        let tx = name(Int(BLESEND_BT_PHY_LE_1M_TX), Int(BLESEND_BT_PHY_LE_2M_TX), Int(BLESEND_BT_PHY_LE_CODED_TX))
        let rx = name(Int(BLESEND_BT_PHY_LE_1M_RX), Int(BLESEND_BT_PHY_LE_2M_RX), Int(BLESEND_BT_PHY_LE_CODED_RX))
        switch (tx, rx) {
        case (nil, nil): return nil
        case let (tx?, rx?) where tx == rx: return tx
        default: return "\(tx ?? "?")/\(rx ?? "?")"
        }
    }

    private static func setOption<T: BitwiseCopyable>(_ fd: Int32, _ option: Int32, _ value: inout T, name: String) throws(L2CAPError) {
        let result = withUnsafeBytes(of: &value) { setsockopt(fd, Int32(BLESEND_SOL_BLUETOOTH), option, $0.baseAddress, socklen_t($0.count)) }
        guard result == 0 else {
            throw .optionFailed(name: name, errno: errno)
        }
    }
}
