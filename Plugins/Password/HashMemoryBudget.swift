import Synchronization

/// Memory the running password hashes may hold at once, in KiB. A hash waits,
/// first come first served, until its memory fits beside the others; one
/// larger than the whole budget runs alone. So peak memory for hashing is
/// the budget, whatever the number of logins.
final class HashMemoryBudget: Sendable {
    private struct State {
        var inUseKiB = 0
        var waiting: [(kib: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let capacityKiB: Int
    private let state = Mutex(State())

    init(capacityKiB: Int) {
        precondition(capacityKiB >= 1)
        self.capacityKiB = capacityKiB
    }

    /// KiB held by running hashes now.
    var inUseKiB: Int { state.withLock { $0.inUseKiB } }

    /// Waits until `kib` fits, and takes it.
    func acquire(_ kib: Int) async {
        let need = min(max(kib, 0), capacityKiB)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fits = state.withLock { state -> Bool in
                guard state.waiting.isEmpty, state.inUseKiB + need <= capacityKiB else {
                    state.waiting.append((need, continuation))
                    return false
                }
                state.inUseKiB += need
                return true
            }
            if fits { continuation.resume() }
        }
    }

    /// Gives back what ``acquire(_:)`` took, and lets waiting hashes in, in order.
    func release(_ kib: Int) {
        let need = min(max(kib, 0), capacityKiB)
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.inUseKiB -= need
            var ready: [CheckedContinuation<Void, Never>] = []
            while let first = state.waiting.first, state.inUseKiB + first.kib <= capacityKiB {
                state.inUseKiB += first.kib
                ready.append(first.continuation)
                state.waiting.removeFirst()
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
