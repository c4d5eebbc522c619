import Admission
import Pipeline

/// Rows for the slots (rule 1), unauthenticated channels (4), pre-emption (5) and the reserved
/// slot (6).
extension AdmissionScript {
    static let slotRows: [AdmissionScript] = [
        AdmissionScript("three channels fill the slots and advertising stops; a closed one frees a slot and it starts again", rules: [1], [
            .on(0, .linkUp(devA)), .on(0, .linkUp(devB)), .on(0, .linkUp(devC)),
            .on(1, open(1, devA), [.admit(ch(1))]),
            .on(1, auth(1, alice)),
            .on(2, open(2, devB), [.admit(ch(2))]),
            .on(2, auth(2, bob)),
            .on(3, open(3, devC), [.admit(ch(3)), .advertise(false)]),
            .on(4, closed(1), [.advertise(true)]),
            .on(5, open(4, devA), [.admit(ch(4)), .advertise(false)]),
        ]),
        AdmissionScript("one link more than maxKnownLinks disconnects the one bare the longest; links with a channel stay",
                        rules: [13], configuration: .init(bareLinkTimeout: .seconds(60), maxBusyAnswers: 0, maxKnownLinks: 4), [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, .linkUp(devB)), .on(2, .linkUp(devC)), .on(3, .linkUp(devD)),
            .on(4, .linkUp(devE), [.disconnect(devB, .tooManyLinks)]),
            .on(5, .linkDown(devB)),
            .on(6, open(2, devF), [.disconnect(devC, .tooManyLinks), .admit(ch(2))]),
            .status(ch(1), .handshaking),
        ]),
        AdmissionScript("links alone take no slot: advertising stays on", rules: [1], [
            .on(0, .linkUp(devA)), .on(0, .linkUp(devB)), .on(0, .linkUp(devC)), .on(0, .linkUp(devD)),
            .on(1, open(1, devA), [.admit(ch(1))]),
        ]),
        AdmissionScript("a link going down frees its channels' slots and advertising resumes", rules: [1], [
            .on(0, open(1, devA), [.admit(ch(1))]), .on(0, auth(1, alice)),
            .on(0, open(2, devB), [.admit(ch(2))]), .on(0, auth(2, bob)),
            .on(0, open(3, devC), [.admit(ch(3)), .advertise(false)]),
            .on(1, .linkDown(devC), [.advertise(true)]),
            .status(ch(3), nil),
            .on(2, closed(3, .lost)),
            .deadline(nil),
        ]),
        AdmissionScript("a second unauthenticated channel from one device replaces the first, with the link's deadline; once one authenticated, another is admitted beside it", rules: [4], [
            .on(0, .linkUp(devA)),
            .on(1, open(1, devA), [.admit(ch(1))]),
            .on(2, open(2, devA), [.close(ch(1), .replaced), .admit(ch(2))]),
            .status(ch(1), nil), .status(ch(2), .handshaking),
            .deadline(10),
            .on(3, auth(2, alice)),
            .on(4, open(3, devA), [.admit(ch(3))]),
            .deadline(14),
        ]),
        AdmissionScript("the unauthenticated places fill at maxUnauthenticated with slots free: the oldest stranger makes room",
                        rules: [4, 5], configuration: .init(maxLinks: 5, maxUnauthenticated: 2, bareLinkTimeout: .seconds(5)), [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, open(2, devB), [.admit(ch(2))]),
            .on(2, open(3, devC), [.close(ch(1), .preempted), .admit(ch(3))]),
            .status(ch(1), nil), .status(ch(3), .handshaking),
        ]),
        AdmissionScript("at the cap a new channel pre-empts the oldest handshaking channel, never an older authenticated one", rules: [5, 1], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(0.5, auth(1, alice)),
            .on(1, open(2, devB), [.admit(ch(2))]),
            .on(2, open(3, devC), [.admit(ch(3)), .advertise(false)]),
            .on(3, open(4, devD), [.close(ch(2), .preempted), .admit(ch(4))]),
            .status(ch(1), .authenticated(alice)), .status(ch(2), nil), .status(ch(3), .handshaking),
        ]),
        AdmissionScript("pre-emption always takes the oldest handshaking channel", rules: [5], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, open(2, devB), [.admit(ch(2))]),
            .on(2, open(3, devC), [.close(ch(1), .preempted), .admit(ch(3))]),
            .on(3, open(4, devD), [.close(ch(2), .preempted), .admit(ch(4))]),
            .on(4, open(5, devE), [.close(ch(3), .preempted), .admit(ch(5))]),
        ]),
        AdmissionScript("every slot authenticated: a new channel is refused as busy until the earliest a session could yield", rules: [5, 8], [
            .on(0, open(1, devA), [.admit(ch(1))]), .on(0, open(2, devB), [.admit(ch(2))]),
            .on(1, auth(1, alice)), .on(2, auth(2, bob)),
            .on(3, open(3, devC), [.admit(ch(3)), .advertise(false)]), .on(3, auth(3, carol)),
            .on(5, open(4, devD), [.refuse(ch(4), .busy(retryAfter: seconds(16)))]),
            .status(ch(4), nil),
            .deadline(10),  // devD's link, bare since its refused channel
            .timers(10, [.disconnect(devD, .bareLink)]),
            .deadline(16),  // channel 1 would stall, and a sender waits
        ]),
        AdmissionScript("a device's new channel does not replace one whose sender a person is asked about: it is refused",
                        rules: [4, 11], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, .promptRequested(ch(1)), [.showPrompt(ch(1))]),
            .on(2, open(2, devA), [.refuse(ch(2), .alreadyHandshaking)]),
            .status(ch(1), .prompting),
        ]),
        AdmissionScript("a channel whose sender a person is asked about is not pre-empted",
                        rules: [5, 6, 11], configuration: .init(maxLinks: 2, bareLinkTimeout: .seconds(5), maxBusyAnswers: 0), [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, .promptRequested(ch(1)), [.showPrompt(ch(1))]),
            .on(2, open(2, devB), [.refuse(ch(2), .busy(retryAfter: seconds(131)))]),
            .status(ch(1), .prompting),
        ]),
        AdmissionScript("strangers fill at most maxLinks - 1 slots; the last waits for a sender that authenticates",
                        rules: [6, 5, 1], configuration: .init(maxLinks: 3, maxUnauthenticated: 5, bareLinkTimeout: .seconds(5)), [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, open(2, devB), [.admit(ch(2))]),
            .on(2, open(3, devC), [.close(ch(1), .preempted), .admit(ch(3))]),
            .on(3, auth(3, carol)),
            .on(4, open(4, devD), [.admit(ch(4)), .advertise(false)]),
        ]),
    ]
}
