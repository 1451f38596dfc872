import Foundation
import Synchronization

/// The user changes whose holders have not all heard them yet
/// (`user_changes`, core migration 0018). A directory write journals the
/// changes it makes in its own transaction; the request that made them
/// tells every holder (`UserLifecycle`) and then finishes them. A change
/// still journaled long after is one whose request died or gave up half
/// way: any replica's sweep (``claimUnfinished(olderThan:limit:lease:)``)
/// tells the holders again (each hears a change twice harmlessly) and
/// finishes it.
public protocol UserChangeJournal: Sendable {
    /// Journals changes that no directory write carries (an admin ending
    /// every session, a user with no directory row leaving), before their
    /// holders are told.
    func record(_ changes: [UserChange]) async throws

    /// Forgets a change every holder has heard.
    func finish(_ change: UserChange) async throws

    /// Up to `limit` changes journaled at least `age` ago and not claimed by
    /// another sweep within `lease`, oldest first; each is claimed for
    /// `lease`, so two replicas' sweeps take different ones.
    func claimUnfinished(olderThan age: Duration, limit: Int, lease: Duration) async throws -> [UserChange]
}

/// The journal in memory, beside the in-memory stores: a change that an
/// in-memory directory makes is journaled right after it.
public final class MemoryUserChanges: UserChangeJournal {
    private struct Entry {
        var change: UserChange
        var recordedAt: ContinuousClock.Instant
        var leasedUntil: ContinuousClock.Instant?
    }

    private let entries = Mutex<[UUID: Entry]>([:])

    public init() {}

    public func record(_ changes: [UserChange]) async throws {
        let now = ContinuousClock.now
        entries.withLock { entries in
            for change in changes { entries[change.id] = Entry(change: change, recordedAt: now) }
        }
    }

    public func finish(_ change: UserChange) async throws {
        _ = entries.withLock { $0.removeValue(forKey: change.id) }
    }

    public func claimUnfinished(olderThan age: Duration, limit: Int, lease: Duration) async throws -> [UserChange] {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            let due = entries.values
                .filter { now - $0.recordedAt >= age && ($0.leasedUntil.map { $0 <= now } ?? true) }
                .sorted { $0.recordedAt < $1.recordedAt }
                .prefix(limit)
            for entry in due { entries[entry.change.id]?.leasedUntil = now + lease }
            return due.map(\.change)
        }
    }

    /// The changes not yet finished.
    public var unfinished: [UserChange] { entries.withLock { Array($0.values.map(\.change)) } }
}
