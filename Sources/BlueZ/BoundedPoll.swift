/// How the BlueZ edge waits for bluetoothd's state to change (a link to end, services to resolve,
/// an object to appear): ask at once, then every `interval`, until `attempt` gives a value or
/// `patience` has passed (nil then; the last attempt is made at or after the deadline).
func boundedPoll<T, E: Error>(
    patience: Duration, every interval: Duration, isolation: isolated (any Actor)? = #isolation,
    _ attempt: () async throws(E) -> T?
) async throws(E) -> T? {
    let deadline = ContinuousClock.now + patience
    while true {
        if let value = try await attempt() { return value }
        if ContinuousClock.now >= deadline { return nil }
        try? await Task.sleep(for: interval)
    }
}
