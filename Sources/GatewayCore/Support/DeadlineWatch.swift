import Synchronization

/// The deadlines of every ``withTimeout(_:_:)`` in flight, kept by one task
/// that sleeps until the earliest of them and expires what is due.
///
/// Adding a deadline is a lock and a dictionary entry. It wakes the watching
/// task only when it is earlier than the one being slept toward, which calls
/// of one timeout never are, and removing one never wakes it. So a database
/// step does not pay a timer, its task and their wake-ups of its own; under
/// steady traffic the watcher wakes about once a timeout. With nothing to
/// watch it ends, and the next deadline starts it again: at rest, nothing
/// runs.
final class DeadlineWatch: Sendable {
    static let shared = DeadlineWatch()

    /// A deadline's handle, to remove it.
    struct Entry: Sendable {
        fileprivate let id: UInt64
    }

    private struct Deadline {
        let instant: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var deadlines: [UInt64: Deadline] = [:]
        var nextID: UInt64 = 0
        /// Whether a watching task runs, and the instant it sleeps toward.
        var watching = false
        var target: ContinuousClock.Instant?
        /// The watcher's current sleep, and whether a new earlier deadline asked to cut it short.
        var sleep: Task<Void, Never>?
        var wakeAsked = false
    }

    private let state = Mutex(State())

    /// Watches `instant`: at it, unless removed first, `expire` runs once (on the watching task).
    func add(_ instant: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> Entry {
        let (id, start, cutShort) = state.withLock { state -> (UInt64, Bool, Task<Void, Never>?) in
            let id = state.nextID
            state.nextID += 1
            state.deadlines[id] = Deadline(instant: instant, expire: expire)
            if !state.watching {
                state.watching = true
                state.target = instant
                return (id, true, nil)
            }
            guard let target = state.target, instant < target else { return (id, false, nil) }
            state.target = instant
            state.wakeAsked = true
            return (id, false, state.sleep)
        }
        if start { Task.detached { await self.watch() } }
        cutShort?.cancel()
        return Entry(id: id)
    }

    /// Forgets a deadline; its `expire` will not run (if it has not already).
    func remove(_ entry: Entry) {
        _ = state.withLock { $0.deadlines.removeValue(forKey: entry.id) }
    }

    /// Deadlines added and neither removed nor expired yet.
    var count: Int { state.withLock { $0.deadlines.count } }

    /// Whether a watching task runs.
    var isWatching: Bool { state.withLock { $0.watching } }

    private func watch() async {
        while true {
            let now = ContinuousClock.now
            let (due, next) = state.withLock { state -> ([@Sendable () -> Void], ContinuousClock.Instant?) in
                var due: [@Sendable () -> Void] = []
                var next: ContinuousClock.Instant?
                for (id, deadline) in state.deadlines {
                    if deadline.instant <= now {
                        due.append(deadline.expire)
                        state.deadlines[id] = nil
                    } else if next.map({ deadline.instant < $0 }) ?? true {
                        next = deadline.instant
                    }
                }
                state.target = next
                state.wakeAsked = false
                if next == nil { state.watching = false }
                return (due, next)
            }
            for expire in due { expire() }
            guard let next else { return }
            let sleep = Task { _ = try? await Task.sleep(until: next, clock: .continuous) }
            let cutShort = state.withLock { state -> Bool in
                state.sleep = sleep
                return state.wakeAsked
            }
            if cutShort { sleep.cancel() }
            await sleep.value
            state.withLock { $0.sleep = nil }
        }
    }
}
