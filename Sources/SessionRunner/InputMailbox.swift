import Synchronization

/// Where a driver's user leaves inputs for a running endpoint from another thread or task (the
/// pairing receiver's "the key is pinned"): posting one wakes the connection's driver, which hands
/// it to the endpoint at once (`DatagramEndpoint.take`); nothing polls. Inputs posted while no
/// connection runs wait for the next one.
public final class InputMailbox<Input: Sendable>: Sendable, EndpointInputs {
    private struct State {
        var posted: [Input] = []
        var doorbell: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    public init() {}

    /// Leaves `input` for the endpoint and wakes its driver.
    public func post(_ input: Input) {
        let doorbell = state.withLock { state in
            state.posted.append(input)
            return state.doorbell
        }
        doorbell?()
    }

    func take() -> [Input] {
        state.withLock { state in
            defer { state.posted.removeAll() }
            return state.posted
        }
    }

    func ring(_ doorbell: (@Sendable () -> Void)?) {
        state.withLock { $0.doorbell = doorbell }
    }
}
