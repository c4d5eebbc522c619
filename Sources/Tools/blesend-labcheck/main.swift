// VM-lab check for the BlueZ transport (not a product): run inside /work/shared/lab/vm after bt-up.sh.
//   blesend-labcheck periph [hciN] [senders]   accept `senders` links one after another, echo every datagram
//   blesend-labcheck central [hciN]            connect, exchange datagrams both ways, burst, report
//   blesend-labcheck errors                    typed errors: unknown adapter
// and for the lab's shell scripts, so that they read the code instead of restating it:
//   blesend-labcheck exit-codes                ExitStatus as shell assignments (ExitCodes.swift)
//   blesend-labcheck events FILE QUERY...      queries on a --json log (Events.swift)
//   blesend-labcheck schema SCHEMA FILE...     every event line of the --json logs matches the schema (SchemaCheck.swift)
//   blesend-labcheck object FILE COND...       checks one JSON object, e.g. doctor --json (Document.swift)
//   blesend-labcheck message1 KEY RPUB FILE    a sender's handshake message 1, hex datagrams (MessageOne.swift)
//   blesend-labcheck manual-sections TOOL      the man page's ENVIRONMENT, FILES, EXIT STATUS (scripts/man.sh)
import BlesendCLI
import BlueZ
import Foundation
import Pipeline

func log(_ s: String) {
    print("[labcheck \(String(format: "%.3f", ProcessInfo.processInfo.systemUptime))] \(s)")
    fflush(nil)
}

let args = CommandLine.arguments
let role = args.count > 1 ? args[1] : "help"
let adapter = args.count > 2 ? args[2] : nil

switch role {
case "manual-sections":
    guard let tool = args.count > 2 ? ManualSections.Tool(rawValue: args[2]) : nil else { fatalError("labcheck: manual-sections blesend|blerecv") }
    print(ManualSections.mdoc(tool: tool), terminator: "")
case "exit-codes":
    print(ExitCodes.shellAssignments(), terminator: "")
case "events":
    exit(Events.run(Array(args.dropFirst(2))))
case "object":
    exit(Document.run(Array(args.dropFirst(2))))
case "schema":
    exit(SchemaCheck.run(Array(args.dropFirst(2))))
case "message1":
    exit(MessageOne.run(Array(args.dropFirst(2))))
case "periph":
    let senders = args.count > 3 ? Int(args[3]) ?? 1 : 1
    let p = try await GattPeripheral.start(adapter: adapter, l2cap: false)
    log("PERIPH READY on \(p.adapterPath)")
    for n in 1...senders {
        guard let link = try await p.accept().gattLink else { fatalError("labcheck: not a GATT link") }
        log("link \(n) from \(link.device ?? "?") mtu=\(link.mtu) max=\(link.maxDatagramSize)")
        var count = 0, bytes = 0, largest = 0
        do {
            while true {
                let d = try await link.receive()
                count += 1; bytes += d.count; largest = max(largest, d.count)
                if d == Array("bye".utf8) { break }
                try await link.send(d)  // echo
            }
            log("link \(n): received \(count) datagrams, \(bytes) bytes, largest \(largest), mtu=\(link.mtu) max=\(link.maxDatagramSize)")
        } catch {
            log("link \(n) ended: \(error) after \(count) datagrams")
        }
        // Wait for the sender to disconnect (notices HUP / Connected=false).
        let t0 = Date()
        while !link.isClosed, Date().timeIntervalSince(t0) < 15 { try await Task.sleep(for: .milliseconds(50)) }
        log("link \(n) closed=\(link.isClosed) after \(String(format: "%.2f", Date().timeIntervalSince(t0)))s")
        await link.close()
    }
    await p.close()
    log("PERIPH DONE")
case "central":
    let t0 = Date()
    guard let link = try await GattCentral.connect(RadioOptions(adapter: adapter, transport: .gatt)).gattLink else {
        fatalError("labcheck: not a GATT link")
    }
    log("connected in \(String(format: "%.2f", Date().timeIntervalSince(t0)))s to \(link.device ?? "?") mtu=\(link.mtu) max=\(link.maxDatagramSize)")
    var failures = 0
    for size in [1, 5, 20, 100, link.maxDatagramSize] {
        let d = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ size) }
        try await link.send(d)
        let back = try await link.receive()
        let ok = back == d
        if !ok { failures += 1 }
        log("echo size=\(size) -> \(back.count) \(ok ? "OK" : "MISMATCH")")
    }
    do {
        try await link.send([UInt8](repeating: 0, count: link.maxDatagramSize + 1))
        failures += 1
        log("oversize send: no error (FAIL)")
    } catch {
        log("oversize send: \(error) (OK)")
    }
    let burst = 200
    let t1 = Date()
    let sender = Task {
        for i in 0..<burst {
            var d = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: link.maxDatagramSize)
            d[0] = UInt8(i & 0xFF); d[1] = UInt8(i >> 8)
            try await link.send(d)
        }
    }
    var got = 0, inOrder = 0
    var seen = Set<Int>()
    while got < burst {
        let d = try await link.receive()
        if d.count >= 2 {
            let index = Int(d[0]) | Int(d[1]) << 8
            if index == got { inOrder += 1 }
            seen.insert(index)
        }
        got += 1
    }
    try await sender.value
    let dt = Date().timeIntervalSince(t1)
    log("burst: \(burst)x\(link.maxDatagramSize) bytes echoed, \(seen.count) distinct, \(inOrder) in order (the transport may reorder), \(String(format: "%.2f", dt))s, \(String(format: "%.1f", Double(burst * link.maxDatagramSize * 2) / dt / 1024)) KiB/s both ways")
    if seen.count != burst { failures += 1 }
    try await link.send(Array("bye".utf8))
    try await Task.sleep(for: .milliseconds(300))
    await link.close()
    log(failures == 0 ? "CENTRAL OK" : "CENTRAL FAILED \(failures)")
    exit(failures == 0 ? 0 : 1)
case "errors":
    do {
        _ = try await GattCentral.connect(RadioOptions(adapter: "hci9", scanTimeout: .seconds(2)))
        log("hci9: no error (FAIL)")
    } catch {
        log("hci9: \(error)")
    }
    do {
        _ = try await GattCentral.connect(RadioOptions(adapter: adapter ?? "hci1", scanTimeout: .seconds(3)))
        log("scan with nobody advertising: no error (FAIL)")
    } catch {
        log("scan with nobody advertising: \(error)")
    }
default:
    print("usage: blesend-labcheck periph [hciN] [senders] | central [hciN] | errors [hciN] | exit-codes | events FILE QUERY... | schema SCHEMA FILE... | object FILE COND... | message1 KEY RPUB FILE [DATAGRAM]")
}
