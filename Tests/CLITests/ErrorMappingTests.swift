@testable import BlesendCLI
import Testing
import Transfer

// The same failed file reads differently on each side: the sender was refused (72), the receiver
// could not write (71, local I/O, as `blerecv --help` documents). Found by the lab's disk-full case.
@Test func aFileThatCouldNotBeStoredIsLocalIOOnTheReceiverAndRefusedOnTheSender() {
    let failure = FileFailure.couldNotStore("cannot write a.bin: No space left on device")
    let receiver = CLIError(receiving: failure, name: "a.bin from alice")
    #expect(receiver.status == .localIO)
    #expect(receiver.message.contains("No space left on device"))
    #expect(receiver.hint != nil)
    #expect(CLIError(failure, name: "a.bin").status == .fileRejected)
    // Everything else keeps the shared mapping.
    #expect(CLIError(receiving: .integrity, name: "a.bin").status == .integrity)
    #expect(CLIError(receiving: .rejected(.tooLarge), name: "a.bin").status == .fileRejected)
}
