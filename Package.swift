// swift-tools-version:6.0
// blesend: encrypted, authenticated file transfer over Bluetooth Low Energy (BlueZ).
// The folder tree follows the stack, bottom to top:
//   CSodium/CDBus/CZstd (C)  ->  Sodium, DBus, Zstd (thin Swift wrappers)
//   Pipeline (shared shapes: time, bytes, transport)  ->  Framing  ->  Handshake  ->  Record  ->  Transfer
//   Session (one endpoint: all layers composed)  ->  SessionRunner (the real-time pump) over L2CAP + BlueZ  ->  CLI
// Tooling in Sources/Tools, never a dependency of the product: MemoryTransport, TestDoubles, Simulation,
// WireVectors, FuzzTargets and their executables, the benchmarks and the lab's checks.
import PackageDescription

let package = Package(
    name: "blesend",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "blesend", targets: ["blesend"]),
        .executable(name: "blerecv", targets: ["blerecv"]),
        .executable(name: "blesend-bench", targets: ["blesend-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),   // LogHandler.log(event:)
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
    ],
    targets: [
        // C libraries, reached through pkg-config.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // The Linux Bluetooth socket ABI Glibc lacks (sockaddr_l2, SOL_BLUETOOTH options); headers only.
        .systemLibrary(name: "CBluetooth"),
        // recvmmsg/sendmmsg (batched datagram I/O) and eventfd, which Glibc's module lacks; headers only.
        .systemLibrary(name: "CSocketCalls"),
        // renameat2 (rename without replacing), which Glibc's module lacks; headers only.
        .systemLibrary(name: "CFileCalls"),
        // adjtimex (is the clock synchronised? for doctor), which Glibc's module lacks; headers only.
        .systemLibrary(name: "CClockCalls"),

        // Thin Swift wrappers over C.
        .target(name: "Sodium", dependencies: ["CSodium"]),
        .target(name: "DBus", dependencies: ["CDBus"]),
        // File chunks compressed against the file's recent bytes (the transfer layer's ChunkCompressor).
        .target(name: "Zstd", dependencies: ["CZstd"]),

        // The sans-IO protocol stack.
        .target(name: "Pipeline"),
        .target(name: "Framing", dependencies: [
            "Pipeline", .product(name: "DequeModule", package: "swift-collections"),
        ]),
        .target(name: "Handshake", dependencies: ["Pipeline", "Sodium"]),
        .target(name: "Record", dependencies: ["Pipeline", "Sodium"]),
        .target(name: "Transfer", dependencies: ["Pipeline", .product(name: "DequeModule", package: "swift-collections")]),
        .target(name: "Keys", dependencies: ["Sodium"]),
        // Pairing two machines by one short code (docs/protocol.md §9): CPace on ristretto255, then
        // the static keys under its key; sans-IO messages and state machines only.
        .target(name: "Pairing", dependencies: ["Sodium", "Keys"]),
        // Private discovery: the service data from which a receiver's trusted senders recognise it.
        .target(name: "Discovery", dependencies: ["Keys", "Sodium", "Pairing"]),
        // Durable state, one home: one disk protocol, one framed and checksummed record format, the
        // journals and records built on them (replay, history, completed, folder, partial, outgoing ids).
        .target(name: "Durable", dependencies: ["Handshake", "Pipeline", "Sodium", "Transfer"]),
        .target(name: "Storage", dependencies: ["Pipeline", "Transfer", "Durable", "CFileCalls", "Sodium"]),
        .target(name: "Session", dependencies: [
            "Pipeline", "Framing", "Handshake", "Record", "Transfer", "Keys", "Sodium", "Zstd", "Pairing",
            .product(name: "DequeModule", package: "swift-collections"),
        ]),
        .target(name: "Admission", dependencies: ["Pipeline"]),

        // Drivers: the real-time pump over real transports.
        .target(name: "SessionRunner", dependencies: ["Session", "Transfer", "Pipeline", "SocketIO", "Admission", .product(name: "DequeModule", package: "swift-collections")]),
        // Datagram sockets shared by the radio transports: waiting on descriptors, handing them to a driver.
        .target(name: "SocketIO", dependencies: ["Pipeline", "CSocketCalls"]),
        // L2CAP LE credit-based channels: kernel sockets, no bluetoothd in the data path.
        .target(name: "L2CAP", dependencies: ["CBluetooth", "Pipeline", "SocketIO"]),
        // GATT through bluetoothd (D-Bus), and finding and reaching the peer for either transport.
        .target(name: "BlueZ", dependencies: [
            "Pipeline", "DBus", "SocketIO", "L2CAP", .product(name: "DequeModule", package: "swift-collections"),
        ]),

        // Command line.
        .target(name: "BlesendCLI", dependencies: [
            "Session", "SessionRunner", "Admission", "Keys", "BlueZ", "Pairing", "Storage", "Durable", "Handshake", "Pipeline", "Discovery", "CClockCalls", "CFileCalls",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "blesend", dependencies: ["BlesendCLI"]),
        .executableTarget(name: "blerecv", dependencies: ["BlesendCLI"]),

        // Tooling (Sources/Tools), never a dependency of the product.
        // The in-memory transport: seeded simulated links, the radio model, the virtual-time pump.
        .target(name: "MemoryTransport", dependencies: ["Pipeline", .product(name: "DequeModule", package: "swift-collections")],
                path: "Sources/Tools/MemoryTransport"),
        // In-memory files for tests, benchmarks and vectors (the file system edge's protocols, no
        // disk), and a socket-pair transport.
        .target(name: "TestDoubles", dependencies: ["Transfer", "Pipeline", "SocketIO", "Durable", "Handshake", "Storage"], path: "Sources/Tools/TestDoubles"),
        // Loopback runs with reconnects, attacker relays, scripted peers.
        .target(name: "Simulation", dependencies: [
            "Session", "MemoryTransport", "Pipeline", "Transfer", "Keys", .product(name: "DequeModule", package: "swift-collections"),
        ], path: "Sources/Tools/Simulation"),
        .executableTarget(name: "blesend-bench", dependencies: [
            "Simulation", "Session", "SessionRunner", "MemoryTransport", "TestDoubles", "Sodium", "Framing", "Record", "Transfer", "Keys",
            "Zstd",
        ], path: "Sources/Tools/blesend-bench"),
        // The subset of JSON Schema that docs/json-events.schema.json uses: the unit tests and the lab
        // check every --json line against it.
        .target(name: "EventSchema", path: "Sources/Tools/EventSchema"),
        // The VM lab's checks: the BlueZ transport, exit codes and --json logs for the lab's scripts.
        .executableTarget(name: "blesend-labcheck", dependencies: ["BlueZ", "Pipeline", "BlesendCLI", "Keys", "Session", "Storage", "EventSchema"],
                          path: "Sources/Tools/blesend-labcheck"),
        // Fuzzing (docs/fuzzing.md): the target bodies are a library, so `swift test` replays the corpus
        // through them; one executable is the libFuzzer entry point when scripts/fuzz.sh builds it with
        // -sanitize=fuzzer, and otherwise replays files and writes the seed corpus.
        .target(name: "FuzzTargets", dependencies: [
            "Pipeline", "Framing", "Handshake", "Record", "Transfer", "Keys", "Session", "Sodium", "DBus", "BlueZ", "MemoryTransport", "Simulation",
            "Pairing",
        ], path: "Sources/Tools/FuzzTargets"),
        .executableTarget(name: "blesend-fuzz", dependencies: ["FuzzTargets"], path: "Sources/Tools/blesend-fuzz"),
        // Wire-format test vectors (Tests/Vectors/blesend/README.md): the format, a deterministic
        // two-endpoint recorder and a one-endpoint replay, as a library so that `swift test` replays
        // every vector file; one executable writes the files.
        .target(name: "WireVectors", dependencies: ["Session", "MemoryTransport", "Framing", "Transfer", "TestDoubles", "Keys", "Sodium", "Pipeline"],
                path: "Sources/Tools/WireVectors"),
        .executableTarget(name: "blesend-vectors", dependencies: ["WireVectors"], path: "Sources/Tools/blesend-vectors"),

        // Tests: one target per module, plus shared test helpers (a private dbus-daemon, running binaries).
        .target(name: "TestSupport", dependencies: ["CFileCalls"], path: "Tests/TestSupport"),
        // A stand-in bluetoothd (org.bluez on a private bus) for the BlueZ and CLI tests.
        .target(name: "BluetoothdStandIn", dependencies: ["DBus"], path: "Tests/BluetoothdStandIn"),
        .testTarget(name: "SodiumTests", dependencies: ["Sodium", "TestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "ZstdTests", dependencies: ["Zstd", "CZstd"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline"]),
        .testTarget(name: "AdmissionTests", dependencies: ["Admission", "Pipeline", "MemoryTransport"]),
        .testTarget(name: "FramingTests", dependencies: ["Framing", "Pipeline", "MemoryTransport"]),
        .testTarget(name: "HandshakeTests", dependencies: ["Handshake", "Sodium", "CSodium", "TestSupport"]),
        .testTarget(name: "RecordTests", dependencies: ["Record", "Sodium", "TestSupport"]),
        .testTarget(name: "TransferTests", dependencies: ["Transfer", "TestDoubles", "Pipeline"]),
        .testTarget(name: "KeysTests", dependencies: ["Keys"]),
        .testTarget(name: "PairingTests", dependencies: ["Pairing", "Keys", "Sodium", "Handshake", "TestSupport"]),
        .testTarget(name: "DiscoveryTests", dependencies: ["Discovery", "Keys", "Sodium", "CSodium"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "Durable", "Transfer", "TestDoubles", "Sodium", "Pipeline"]),
        .testTarget(name: "DurableTests", dependencies: ["Durable", "Handshake", "TestDoubles", "Transfer", "Pipeline", "Storage", "Sodium"]),
        .testTarget(name: "SessionTests", dependencies: [
            "Session", "Simulation", "MemoryTransport", "TestDoubles", "Keys", "Transfer", "Storage", "Handshake", "Sodium", "Pipeline", "Zstd",
            "Pairing",
        ]),
        .testTarget(name: "SessionRunnerTests", dependencies: [
            "SessionRunner", "Admission", "Session", "Framing", "MemoryTransport", "TestDoubles", "Keys", "Transfer", "Pipeline", "SocketIO",
        ]),
        .testTarget(name: "MemoryTransportTests", dependencies: ["MemoryTransport"]),
        .testTarget(name: "CLITests", dependencies: [
            "BlesendCLI", "BlueZ", "L2CAP", "Session", "SessionRunner", "MemoryTransport", "TestDoubles", "Transfer", "Pipeline", "Keys", "TestSupport", "Discovery", "Sodium", "Durable", "Storage",
            "BluetoothdStandIn", "Pairing", "EventSchema", .product(name: "Logging", package: "swift-log"),
        ]),
        // The attack table of docs/threat-model.md: one test per row, real pipeline, real folders.
        .testTarget(name: "AttackTableTests", dependencies: [
            "BlesendCLI", "Simulation", "Session", "SessionRunner", "Storage", "Keys", "MemoryTransport", "TestDoubles", "Transfer",
            "Framing", "Handshake", "Sodium", "Pipeline", "TestSupport", "Durable",
        ]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBus", "Pipeline", "SocketIO", "L2CAP", "TestSupport", "BluetoothdStandIn"]),
        .testTarget(name: "L2CAPTests", dependencies: ["L2CAP", "Pipeline", "SocketIO"]),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"]),
        .testTarget(name: "WireVectorTests", dependencies: ["WireVectors", "Framing", "Handshake", "Pipeline", "Sodium", "TestSupport"]),
    ]
)
