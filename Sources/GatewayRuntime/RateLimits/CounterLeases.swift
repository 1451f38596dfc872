import GatewayCore
import Synchronization

/// Blocks of a high limit that this replica has taken from the shared
/// counters and spends in memory, so a busy counter (an app's `app` budget,
/// a client's `ip` where it is set high) is not a row every request locks.
///
/// Only policies that count every request and whose limit is at least
/// ``RateLimitSettings/leaseMinimumLimit`` are leased; attempt limits
/// (failures, code sends) and low limits stay exact in the database. A lease
/// is a reservation of several units (``CounterTouch/units``) in the current
/// window: PostgreSQL grants only what the limit has room for, under the
/// counter row's lock, so the blocks of every replica never sum past the
/// limit, and a request served from a block is one the limit let through.
///
/// What a block costs the limit's exactness, and for how long:
/// - Units leased and not spent are counted as spent: a limit may refuse
///   early, never let more through. A replica's unspent units of a past
///   window go back with its next touch of that counter, when they are
///   more than a first block: a counter that spends less than a block a
///   window (an app among ten thousand) would otherwise touch two rows at
///   each new window, the past one and the new one, and a first block's
///   units (1/1024 of the limit) weigh little on the next. A replica that
///   stops (or dies) strands at most its last block, counted in that
///   window and weighing on the next by the sliding window's overlap: two
///   periods at most.
/// - A block is at most 1/64 of the limit, and a subject's first block of
///   a window is 1/1024 of the limit (at least 8 units), doubling with each
///   block it takes, so a client seen once strands at most that first block
///   less one unit of its own counter. In proportion to the limit: a
///   counter that spends less than 1/1024 of its limit in a window (an app
///   among ten thousand on one replica) takes one block a window, where
///   blocks of 8 and then 16 units took two. A replica asks
///   for one block of a counter at a time (requests meanwhile touch it
///   exactly), so it holds at most one block's unspent units.
/// - A block whose statement failed may have been granted all the same
///   (``abandon(_:)``): the counter is then touched exactly until the
///   database answers again, so a fault strands one block, not one a request.
/// - Near the limit (less room than two blocks, as this replica last read
///   it) the counter is touched exactly, one request a touch, so refused
///   requests are counted as the policy says. A block asked for where no
///   room was left refuses its request without counting it: at most one
///   request a window, replica and counter.
public final class CounterLeases: Sendable {
    /// A window's first block: 1/`firstShare` of the limit, and at least `smallestFirstBlock` units.
    static let firstShare = 1024
    static let smallestFirstBlock = 8
    /// A block is at most this share of the limit.
    static let largestShare = 64
    /// Counters held at most by default; past it, a counter not held is
    /// touched exactly. An app's `app` counter is one, and so is each client
    /// address of a high `ip` limit: ten thousand apps with both leased hold
    /// twenty thousand, a few MiB; a flood of new addresses stops here.
    public static let defaultCapacity = 100_000
    /// Counters held at most.
    let capacity: Int

    struct Key: Hashable {
        let appID: AppID
        let policy: String
        let subject: String

        /// The counter `touch` touches.
        init(_ touch: CounterTouch) {
            appID = touch.appID
            policy = touch.window.policy.name
            subject = touch.subject
        }
    }

    /// One counter's block in one window.
    struct Lease {
        /// The window the block was granted in: its start, and the policy as
        /// it stood (its period may change since; a block goes back to the
        /// window it came from).
        var windowStart: Int64
        var policy: RateLimitPolicy
        /// Units granted and not spent yet.
        var unused = 0
        /// The window's count and the previous window's, as last read (granted units included).
        var current = 0
        var previous = 0
        /// What the next block asks for.
        var nextBlock: Int
        /// The last reading left less room than two blocks: touch exactly.
        var exact = false
        /// A block has been asked for and not answered yet: one at a time,
        /// so a replica holds at most one block's unspent units.
        var asking = false

        init(_ window: SlidingWindow) {
            windowStart = window.windowStart
            policy = window.policy
            nextBlock = CounterLeases.firstBlock(of: window.policy)
        }

        /// Whether `window` is the one this block is of: the same start under the same period.
        func isOf(_ window: SlidingWindow) -> Bool {
            windowStart == window.windowStart && policy.periodSeconds == window.policy.periodSeconds
        }
    }

    /// What to do for one request's touch of a leased counter.
    enum Plan {
        /// Served from the block: the reading as a count would have read it.
        case served(CounterReading)
        /// Ask for a block: a reservation of this many units.
        case lease(units: Int)
        /// Touch the counter as the policy says, one request.
        case exact
    }

    /// The counters held, and when the expired ones were last swept.
    private struct Held {
        var leases: [Key: Lease] = [:]
        var lastSweep = 0.0
    }

    private let held = Mutex(Held())

    public init(capacity: Int = CounterLeases.defaultCapacity) {
        self.capacity = capacity
    }

    /// Whether `key` is not held and `state` has no room for it.
    private func isFull(_ state: Held, without key: Key) -> Bool {
        state.leases[key] == nil && state.leases.count >= capacity
    }

    /// How `touch` (a `.count` touch of a leased policy) is applied, and the
    /// unspent units of a past window of its counter to give back first, if any.
    func plan(_ touch: CounterTouch) -> (Plan, giveBack: CounterTouch?) {
        let key = Key(touch)
        let window = touch.window
        return held.withLock { state -> (Plan, giveBack: CounterTouch?) in
            var giveBack: CounterTouch?
            var lease: Lease
            if let kept = state.leases[key], kept.isOf(window) {
                lease = kept
            } else {
                if isFull(state, without: key) {
                    Self.sweep(&state, at: window)
                    guard state.leases.count < capacity else { return (.exact, nil) }
                }
                if let kept = state.leases[key], kept.unused > Self.firstBlock(of: kept.policy) {
                    // Back to the window the block came from, under the period it was granted with.
                    giveBack = CounterTouch(
                        appID: touch.appID, window: SlidingWindow(policy: kept.policy, now: Double(kept.windowStart)),
                        subject: touch.subject, mode: .release, units: kept.unused)
                }
                lease = Lease(window)
            }
            defer { state.leases[key] = lease }
            if lease.unused > 0 {
                lease.unused -= 1
                // As a count reads: this request included, the block's unspent units not.
                let reading = CounterReading(current: lease.current - lease.unused, previous: lease.previous, allowed: true)
                return (.served(reading), giveBack)
            }
            if lease.exact || lease.asking { return (.exact, giveBack) }
            lease.asking = true
            return (.lease(units: min(lease.nextBlock, Self.largestBlock(of: window.policy))), giveBack)
        }
    }

    /// Notes what the database read for `touch`'s counter: a block's grant
    /// (`leased`), or an exact touch's count.
    func record(_ touch: CounterTouch, reading: CounterReading, leased: Bool) {
        let key = Key(touch)
        let window = touch.window
        held.withLock { state in
            // A reading of a window this replica has left behind changes nothing (a block granted
            // there is stranded: at most one); nor does one of a counter not held when the map is full.
            if let kept = state.leases[key], kept.windowStart > window.windowStart { return }
            if isFull(state, without: key) { return }
            // A block of another window (or period) left here is stranded: counted as spent, never given back elsewhere.
            var lease = state.leases[key].flatMap { $0.isOf(window) ? $0 : nil } ?? Lease(window)
            if leased {
                lease.asking = false
                // This request spends one granted unit; the rest wait in the block.
                lease.unused += max(reading.granted - 1, 0)
                lease.nextBlock = min(lease.nextBlock * 2, Self.largestBlock(of: window.policy))
            }
            lease.current = reading.current
            lease.previous = reading.previous
            let room = window.room(current: reading.current, previous: reading.previous)
            lease.exact = room < 2 * lease.nextBlock || (leased && reading.granted == 0)
            state.leases[key] = lease
        }
    }

    /// The first block of a window of `policy`'s counters: 1/1024 of its limit, at least 8 units.
    static func firstBlock(of policy: RateLimitPolicy) -> Int {
        max(policy.limit / firstShare, smallestFirstBlock)
    }

    /// The largest block of `policy`'s counters: 1/64 of its limit.
    static func largestBlock(of policy: RateLimitPolicy) -> Int {
        max(policy.limit / largestShare, 1)
    }

    /// Forgets the block `touch` asked for, whose statement failed. Its
    /// outcome is in doubt: a commit can succeed after its answer is lost
    /// (a connection cut while synchronous replication held the commit), so
    /// its units may be stranded. Until the database answers a touch of this
    /// counter again, it is touched exactly, and blocks start again from the
    /// first: a fault strands at most the block in flight when it began and
    /// one unit for each request it failed, as exact counting would.
    func abandon(_ touch: CounterTouch) {
        let key = Key(touch)
        held.withLock { state in
            guard var lease = state.leases[key], lease.isOf(touch.window) else { return }
            lease.asking = false
            lease.exact = true
            lease.nextBlock = Self.firstBlock(of: lease.policy)
            state.leases[key] = lease
        }
    }

    /// Counters held.
    var count: Int { held.withLock { $0.leases.count } }

    /// Drops the counters whose window is two periods past (their units
    /// weigh on no window any more): when the map is full and a new counter
    /// comes, at most once a second, so a flood of new subjects does not
    /// make every request walk the map.
    private static func sweep(_ state: inout Held, at window: SlidingWindow) {
        let period = Double(window.policy.periodSeconds)
        let now = Double(window.windowStart) + window.elapsedFraction * period
        guard now - state.lastSweep >= 1 else { return }
        state.lastSweep = now
        let horizon = window.windowStart - 2 * Int64(window.policy.periodSeconds)
        state.leases = state.leases.filter { $0.value.windowStart > horizon }
    }
}
