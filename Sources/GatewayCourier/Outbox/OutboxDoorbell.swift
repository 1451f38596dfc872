import Foundation
import Synchronization

/// Tells this replica's workers that a message was queued, so it is
/// delivered at once instead of at the next poll. Other replicas' workers
/// find it at their next poll (``OutboxWorker/Settings/pollInterval``).
/// Any number of workers may wait on one bell (two gateways in one process
/// share their plugins' bells); a ring wakes every one that waits, or the
/// next to wait when none does.
public final class OutboxDoorbell: Sendable {
    private struct State {
        var rung = false
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// A message was queued.
    public func ring() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else {
                state.rung = true
                return []
            }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the bell rings (or has rung since the last wait), after
    /// `timeout` at the latest, or when the task is cancelled.
    func wait(upTo timeout: Duration) async {
        let id = UUID()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitForRing(id) }
            await group.next()
            group.cancelAll()
            release(id)
        }
    }

    private func waitForRing(_ id: UUID) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            release(id)
        }
    }

    /// Resumes waiter `id` if it still waits (it timed out or was cancelled).
    private func release(_ id: UUID) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
