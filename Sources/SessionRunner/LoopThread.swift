import Glibc

/// Runs blocking work on a thread of its own (not Swift's cooperative pool, whose two or so threads
/// a `poll()` would take away from every other task) while the calling task waits.
enum LoopThread {
    /// Runs `body` on a new thread and returns its result. `body` may capture the caller's
    /// non-Sendable state, `inout` parameters included: the caller stays suspended until `body`
    /// has returned, so only one thread ever touches that state at a time (`CallerSuspended`).
    static func run<T>(_ body: () -> T) async -> T {
        await withoutActuallyEscaping(body) { escapable in
            let job = CallerSuspended(escapable)
            await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
                job.resumed = resumed
                if !job.start() {
                    // No thread to be had (resource limits): block here, as `poll` would anyway.
                    job.runAndResume()
                }
            }
            return job.result!
        }
    }
}

/// The work of one `LoopThread.run` and its result, handed to the thread as a raw pointer.
///
/// Sound because it is touched first by the caller (before the thread starts), then only by the
/// thread, then by the caller again after the continuation is resumed; thread creation and the
/// continuation are the happens-before edges. Region-based isolation cannot see that the caller is
/// suspended all the while (a `sending` closure may not capture the caller's session or callbacks),
/// so the job crosses as the raw pointer that `pthread_create` takes anyway, not as a Sendable value.
private final class CallerSuspended<T> {
    /// Dropped before the caller is resumed: `withoutActuallyEscaping` traps if the closure is
    /// still referenced when the caller's block ends.
    private var body: (() -> T)?
    var result: T?
    var resumed: CheckedContinuation<Void, Never>?

    init(_ body: @escaping () -> T) { self.body = body }

    func runAndResume() {
        if let body = body.take() { result = body() }
        let resumed = resumed.take()
        resumed?.resume()
    }

    /// Starts a detached thread that runs the job; false if none could be made.
    func start() -> Bool {
        ThreadEntry(runAndResume).start()
    }
}

/// What a new pthread runs (a C entry point cannot capture a generic job, so it takes this).
private final class ThreadEntry {
    private let main: () -> Void

    /// `main` is handed to exactly one new thread and never touched here again.
    init(_ main: @escaping () -> Void) { self.main = main }

    func start() -> Bool {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let made = pthread_create(&thread, nil, { raw in
            Unmanaged<ThreadEntry>.fromOpaque(raw!).takeRetainedValue().main()
            return nil
        }, context)
        guard made == 0 else {
            Unmanaged<ThreadEntry>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
