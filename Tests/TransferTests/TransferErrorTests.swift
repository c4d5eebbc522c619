import Testing
@testable import Transfer
import Pipeline

@Test func storageErrorsAreEqualByTheirCodeAndReadAsTheirDetail() {
    #expect(StorageError(.noSpace, "disk full") == StorageError(.noSpace, "quota exceeded"))
    #expect(StorageError(.noSpace, "disk full") != StorageError(.io, "disk full"))
    #expect("\(StorageError(.exists, "a.txt is already taken"))" == "a.txt is already taken")
    #expect(StorageError.Code.notWritable.rawValue == "notWritable")
}

@Test func anyOtherErrorThrownThroughTheStorageProtocolsIsAnIOError() {
    struct Odd: Error {}
    let adapted = StorageError(adapting: Odd())
    #expect(adapted.code == .io && adapted.detail.contains("Odd"))
    let own = StorageError(.notWritable, "read-only")
    #expect(StorageError(adapting: own).code == .notWritable && StorageError(adapting: own).detail == "read-only")
}

@Test func fileFailuresKeepTheStorageErrorAndCompareByItsCode() {
    let full = FileFailure.couldNotStore(StorageError(.noSpace, "cannot write a.bin: No space left on device"))
    #expect(full == .couldNotStore(StorageError(.noSpace, "other words")))
    #expect(full != .couldNotStore(StorageError(.notWritable, "cannot write a.bin: No space left on device")))
    #expect(full != .receiverCouldNotStore)
    guard case .couldNotStore(let error) = full else { return }
    #expect(error.detail.hasSuffix("No space left on device"))
}

@Test func sourceFailuresSayWhatHappenedToWhichFile() {
    let unreadable = FileSourceError(.unreadable, name: "a", cause: StorageError(.io, "cannot read a: Permission denied"))
    #expect(unreadable.description == "cannot read a: Permission denied")
    #expect(FileSourceError(.unreadable, name: "a").description == "cannot read a")
    #expect(FileSourceError(.shrank, name: "a.log").description == "a.log became shorter while it was being sent")
    #expect(FileSourceError(.readTooMuch, name: "a").description.contains("more than asked"))
    #expect(TransferError.sourceFailed(FileSourceError(.shrank, name: "a.log")).description == "a.log became shorter while it was being sent")
    #expect(TransferError.sourceFailed(unreadable) == .sourceFailed(FileSourceError(.unreadable, name: "b")))
    #expect(TransferError.sourceFailed(unreadable) != .sourceFailed(FileSourceError(.shrank, name: "a")))
}

@Test func aDecompressionErrorNamesItsCodeAsBefore() {
    let error = TransferError.decompressionFailed(ChunkDecompressionError(code: .contentSizeMismatch))
    #expect(error.description == "it sent a compressed chunk that does not decompress as declared (contentSizeMismatch)")
    #expect(ChunkDecompressionError(code: .sizeMismatch).description == "sizeMismatch")
}
