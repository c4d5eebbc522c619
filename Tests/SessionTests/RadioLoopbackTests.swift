import MemoryTransport
import Pipeline
import Simulation
import TestDoubles
import Testing

/// A whole session over the modelled BLE air: the file arrives intact, and never faster than the
/// raw stream the model allows.
@Test(arguments: [
    RadioModel(phy: .le1M, dataLength: 251, connectionInterval: .milliseconds(15)),
    RadioModel(phy: .le2M, dataLength: 251, connectionInterval: .microseconds(7500), maxPacketsPerEvent: 6,
               transport: RadioModel.l2capCoC(dataLength: 251)),
    RadioModel(phy: .le1M, dataLength: 27, connectionInterval: .milliseconds(30), maxPacketsPerEvent: 4),
])
func aFileArrivesIntactOverTheRadioModel(radio: RadioModel) {
    let size = radio.dataLength == 27 ? 20_000 : 200_000
    let datagram = 244
    let pair = Pair()
    let data = bytes(size, seed: 11)
    var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "air", bytes: data)])
    var options = LoopbackRun.Options(maxDatagramSize: datagram)
    options.faults = .perfect
    options.radio = radio
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
    #expect(outcome.finished, "\(radio): \(outcome.senderErrors) \(outcome.receiverErrors)")
    #expect(pair.store.committed["air"] == data)
    #expect(outcome.connections == 1)
    let raw = RadioScheduler<Int>.streamTime(model: radio, datagramSize: datagram, count: size / datagram)
    #expect(outcome.virtualTime > raw)
}

@Test func aLossyRadioLinkStillDeliversAndACutResumes() {
    let pair = Pair()
    let data = bytes(100_000, seed: 12)
    var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "air", bytes: data)])
    var options = LoopbackRun.Options(maxDatagramSize: 244)
    options.faults = FaultProfile(loss: 0.02, corruption: 0.01, latency: .milliseconds(1))
    options.radio = RadioModel(phy: .le2M, connectionInterval: .milliseconds(15))
    options.cutsAfterDatagrams = [150]
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
    #expect(outcome.finished, "\(outcome.senderErrors) \(outcome.receiverErrors)")
    #expect(pair.store.committed["air"] == data)
    #expect(outcome.connections == 2)
}
