import Admission
import Pipeline

/// Rows for busy answers (rule 12): two slots, both held by authenticated senders.
extension AdmissionScript {
    private static let twoSlots = AdmissionConfiguration(maxLinks: 2, bareLinkTimeout: .seconds(5))

    /// Alice on devA and Bob on devB take both slots at 0 s.
    private static let full: [Step] = [
        .on(0, open(1, devA), [.admit(ch(1))]), .on(0, auth(1, alice)),
        .on(0, open(2, devB), [.admit(ch(2)), .advertise(false)]), .on(0, auth(2, bob)),
    ]

    static let busyRows: [AdmissionScript] = [
        AdmissionScript("at the cap a newcomer is answered busy, to come back when a slot may free; it holds no slot and its end costs nothing",
                        rules: [12, 1, 8], configuration: twoSlots, full + [
            .on(3, open(3, devC), [.answerBusy(ch(3), retryAfter: seconds(15), ahead: 0)]),
            .status(ch(3), nil),
            .deadline(13),  // its handshake deadline, from its link
            .on(4, closed(3, .handshakeFailed)),
            .deadline(9),  // devC's link, bare from 4 s
            .on(5, open(4, devC), [.answerBusy(ch(4), retryAfter: seconds(15), ahead: 0)]),
        ]),
        AdmissionScript("one busy answer at a time; those told later hear how many still wait before them, and a device that got a slot no longer counts",
                        rules: [12], configuration: twoSlots, full + [
            .on(1, open(3, devC), [.answerBusy(ch(3), retryAfter: seconds(15), ahead: 0)]),
            .on(2, open(4, devD), [.refuse(ch(4), .busy(retryAfter: seconds(15)))]),
            .on(3, closed(3)),
            .on(4, open(5, devD), [.answerBusy(ch(5), retryAfter: seconds(15), ahead: 1)]),
            .on(5, closed(5)),
            .on(6, closed(1), [.advertise(true)]),
            .on(7, open(6, devD), [.admit(ch(6)), .advertise(false)]),
            .on(8, auth(6, carol)),
            .on(9, open(7, devE), [.answerBusy(ch(7), retryAfter: seconds(15), ahead: 1)]),
        ]),
        AdmissionScript("a device whose busy answer is under way is refused another channel",
                        rules: [12, 4], configuration: .init(maxLinks: 2, bareLinkTimeout: .seconds(5), maxBusyAnswers: 2), full + [
            .on(1, open(3, devC), [.answerBusy(ch(3), retryAfter: seconds(15), ahead: 0)]),
            .on(2, open(4, devC), [.refuse(ch(4), .busy(retryAfter: seconds(15)))]),
            .on(2, open(5, devD), [.answerBusy(ch(5), retryAfter: seconds(15), ahead: 1)]),
        ]),
        AdmissionScript("a busy channel that never gets its answer is closed at its handshake deadline, and its device backs off",
                        rules: [12, 3, 7], configuration: twoSlots, full + [
            .on(1, open(3, devC), [.answerBusy(ch(3), retryAfter: seconds(15), ahead: 0)]),
            .deadline(11),
            .timers(tickBefore(11)),
            .timers(11, [.close(ch(3), .handshakeTimeout)]),
            .on(12, open(4, devC), [.refuse(ch(4), .backoff(until: seconds(13)))]),
        ]),
        AdmissionScript("a link going down ends its busy answer, and its device no longer waits",
                        rules: [12, 1], configuration: twoSlots, full + [
            .on(1, open(3, devC), [.answerBusy(ch(3), retryAfter: seconds(15), ahead: 0)]),
            .on(2, .linkDown(devC)),
            .deadline(15),  // only a session that could yield to the waiter
            .on(3, open(4, devD), [.answerBusy(ch(4), retryAfter: seconds(15), ahead: 0)]),
        ]),
    ]
}
