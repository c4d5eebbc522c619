import Admission
import Pipeline

/// Rows for the same key twice (rule 9), re-registration (10), first contact (11), and input the
/// policy must shrug off.
extension AdmissionScript {
    static let sessionRows: [AdmissionScript] = [
        AdmissionScript("the same sender key on a newer channel closes the older", rules: [9], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, auth(1, alice)),
            .on(2, open(2, devB), [.admit(ch(2))]),
            .on(3, auth(2, alice), [.close(ch(1), .supersededBySameKey)]),
            .status(ch(1), nil), .status(ch(2), .authenticated(alice)),
            .deadline(33),  // devA's link, bare since its channel was closed; alice is served on ch2: its ceiling
        ]),
        AdmissionScript("different keys share the receiver; a second authentication on a channel changes nothing", rules: [9], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, auth(1, alice)),
            .on(2, open(2, devB), [.admit(ch(2))]),
            .on(3, auth(2, bob)),
            .on(4, auth(1, bob)),
            .status(ch(1), .authenticated(alice)), .status(ch(2), .authenticated(bob)),
        ]),
        AdmissionScript("re-registering is allowed once per reregisterInterval", rules: [10], [
            .on(0, .reregisterRequested, [.reregister]),
            .on(5, .reregisterRequested, [.reregisterDeferred(allowedAt: seconds(10))]),
            .on(tickBefore(10), .reregisterRequested, [.reregisterDeferred(allowedAt: seconds(10))]),
            .on(10, .reregisterRequested, [.reregister]),
            .on(12, .reregisterRequested, [.reregisterDeferred(allowedAt: seconds(20))]),
        ]),
        AdmissionScript("one question at a time: a second request is answered busy, not queued", rules: [11], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(0, open(2, devB), [.admit(ch(2))]),
            .on(1, .promptRequested(ch(1)), [.showPrompt(ch(1))]),
            .on(2, .promptRequested(ch(2)), [.promptBusy(ch(2))]),
            .on(3, .promptRequested(ch(1))),
            .on(4, auth(1, alice)),
            .on(4, .promptFinished(ch(1))),
            .on(5, .promptRequested(ch(2)), [.showPrompt(ch(2))]),
        ]),
        AdmissionScript("while asked about, a channel's handshake deadline waits; the question's own bound closes it and backs off",
                        rules: [11, 3, 7], [
            .on(0, .linkUp(devA)),
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(5, .promptRequested(ch(1)), [.showPrompt(ch(1))]),
            .deadline(135),
            .timers(10),
            .timers(tickBefore(135)),
            .timers(135, [.close(ch(1), .promptTimeout)]),
            .on(136, open(2, devA), [.refuse(ch(2), .backoff(until: seconds(137)))]),
        ]),
        AdmissionScript("a question finished without authentication falls back to the handshake deadline", rules: [11, 3], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, .promptRequested(ch(1)), [.showPrompt(ch(1))]),
            .on(20, .promptFinished(ch(1))),
            .deadline(10),
            .timers(20, [.close(ch(1), .handshakeTimeout)]),
            .on(21, open(2, devB), [.admit(ch(2))]),
            .on(21, .promptRequested(ch(2)), [.showPrompt(ch(2))]),
        ]),
        AdmissionScript("questions about channels not handshaking are ignored", rules: [11], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, auth(1, alice)),
            .on(2, .promptRequested(ch(1))),
            .on(3, .promptRequested(ch(9))),
            .on(4, .promptFinished(ch(1))),
            .status(ch(1), .authenticated(alice)),
        ]),
        AdmissionScript("unknown channels and devices change nothing", rules: [], [
            .on(0, .linkDown(devA)),
            .on(0, closed(9, .handshakeFailed)),
            .on(0, auth(9, alice)),
            .on(0, .progress(ch(9))),
            .on(0, .promptRequested(ch(9))),
            .on(0, .promptFinished(ch(9))),
            .deadline(nil),
            .timers(100),
            .on(100, open(1, devA), [.admit(ch(1))]),
        ]),
        AdmissionScript("a channel number reported twice is ignored the second time", rules: [], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, open(1, devB)),
            .status(ch(1), .handshaking),
            .on(2, open(2, devB), [.admit(ch(2))]),
        ]),
        AdmissionScript("linkDown clears the device's channels and deadlines", rules: [], [
            .on(0, .linkUp(devA)),
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(0, .linkUp(devB)),
            .on(1, .linkDown(devA)),
            .status(ch(1), nil),
            .deadline(5),
            .on(2, .linkDown(devB)),
            .deadline(nil),
            .timers(20),
        ]),
        AdmissionScript("a report about a channel the policy closed itself is ignored", rules: [], [
            .on(0, open(1, devA), [.admit(ch(1))]),
            .on(1, open(2, devB), [.admit(ch(2))]),
            .on(2, open(3, devC), [.close(ch(1), .preempted), .admit(ch(3))]),
            .on(3, closed(1, .handshakeFailed)),  // no backoff for devA
            .on(4, open(4, devA), [.close(ch(2), .preempted), .admit(ch(4))]),
        ]),
        AdmissionScript("a link reported up twice keeps its first time", rules: [], [
            .on(0, .linkUp(devA)),
            .on(3, .linkUp(devA)),
            .timers(5, [.disconnect(devA, .bareLink)]),
        ]),
    ]
}
