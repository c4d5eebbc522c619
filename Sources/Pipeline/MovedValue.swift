extension Optional {
    /// Runs `body` on the wrapped value moved out (not copied), so that the buffers it holds stay
    /// uniquely referenced and are not copied on write; puts it back afterwards, even on a throw.
    /// Nil when there is no value.
    @inlinable
    public mutating func withMovedValue<Result, Failure: Error>(_ body: (inout Wrapped) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard var value = take() else { return nil }
        defer { self = value }
        return try body(&value)
    }
}
