import Foundation

/// Runs one of the package's built executables and captures what it prints and its exit status.
public struct CommandRun: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// The folder holding the built products (next to the test bundle).
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// Runs `tool` (e.g. "blesend") with `arguments`; `environment` entries are added to ours. A
    /// tool still running after `timeout` is sent `stopSignal` (SIGTERM, or SIGINT as Ctrl-C would).
    public static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:],
                           stdin: Data? = nil, timeout: TimeInterval = 60, stopSignal: Int32 = SIGTERM) throws -> CommandRun {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent(tool)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read both pipes while the tool runs, so a chatty tool cannot block on a full pipe.
        let outData = Locked(Data()), errData = Locked(Data())
        let group = DispatchGroup()
        for (pipe, sink) in [(out, outData), (err, errData)] {
            group.enter()
            DispatchQueue.global().async {
                sink.set(readToEnd(pipe.fileHandleForReading.fileDescriptor))
                group.leave()
            }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, stopSignal)
            process.waitUntilExit()
        }
        group.wait()
        process.waitUntilExit()
        return CommandRun(status: process.terminationStatus,
                          stdout: String(decoding: outData.get(), as: UTF8.self),
                          stderr: String(decoding: errData.get(), as: UTF8.self))
    }
}

/// Everything until end of file. Foundation's `readDataToEndOfFile` traps on `EINTR`, which a
/// signal (e.g. SIGCHLD from another test's child process) can cause; this retries instead.
func readToEnd(_ fd: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 {
            data.append(contentsOf: buffer[0..<n])
        } else if n < 0 && errno == EINTR {
            continue
        } else {
            return data
        }
    }
}

final class Locked<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ value: T) { self.value = value }
    func set(_ new: T) { lock.lock(); value = new; lock.unlock() }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
}
