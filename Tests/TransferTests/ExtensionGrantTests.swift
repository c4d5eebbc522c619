import Testing
@testable import Transfer

private let receiverTakes: TransferExtensions = [.pipelining, .compression]

@Test func aGrantIsWhatWasAskedForAndIsSupported() {
    var grant = ExtensionGrant(supported: receiverTakes)
    #expect(grant.granting([.compression, .folders, TransferExtensions(rawValue: 1 << 30)]) == .compression)
    #expect(grant.begin(opening: [.hello(.known), .offer(.init(id: sampleID, size: 1, name: "a"))]) == .hello(receiverTakes))
    #expect(grant.granted == receiverTakes)
    // A connection without a hello gets nothing, whatever the one before got.
    #expect(grant.begin(opening: [.offer(.init(id: sampleID, size: 1, name: "a"))]) == nil)
    #expect(grant.granted.isEmpty)
}

@Test func messagesOfAnExtensionAreAdmittedOnlyWhereItWasGranted() {
    var grant = ExtensionGrant(supported: [.pipelining, .compression, .folders])
    _ = grant.begin(opening: [])
    let gated: [TransferMessage.Kind] = [.entry, .folder, .commit, .zdata, .batch]
    #expect(gated.allSatisfy { !grant.admits($0) })
    #expect([TransferMessage.Kind.offer, .data, .done, .bye, .accept].allSatisfy { grant.admits($0) })
    _ = grant.begin(opening: [.hello(.folders)])
    #expect([TransferMessage.Kind.entry, .folder, .commit].allSatisfy { grant.admits($0) })
    #expect(!grant.admits(.zdata) && !grant.admits(.batch))
    _ = grant.begin(opening: [.hello([.compression, .pipelining])])
    #expect(grant.admits(.zdata) && grant.admits(.batch) && !grant.admits(.entry))
}

@Test func anOpeningIsOneOfferOrWithFoldersGrantedOneFolderItem() {
    let grant = ExtensionGrant(supported: [.pipelining, .folders])
    let offer = TransferMessage.offer(.init(id: sampleID, size: 1, name: "a"))
    let folder = TransferMessage.folder(id: sampleID, tree: sampleID, path: Array("t".utf8))
    let table: [([TransferMessage], Bool)] = [
        ([offer], true),
        ([.hello(.pipelining), offer], true),
        ([], false),
        ([.hello(.pipelining)], false),
        ([offer, offer], false),
        ([.data([1])], false),
        ([folder], false),
        ([.hello(.pipelining), folder], false),
        ([.hello(.folders), folder], true),
        ([.hello(.folders), .commit(tree: sampleID)], true),
        ([.hello(.folders), .bye], false),
    ]
    for (opening, opens) in table {
        #expect(grant.admitsOpening(opening) == opens, "\(opening)")
    }
    #expect(!ExtensionGrant(supported: [.pipelining]).admitsOpening([.hello(.folders), folder]), "asked for, not supported")
}
