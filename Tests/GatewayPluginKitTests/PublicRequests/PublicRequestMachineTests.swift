import GatewayCore
@testable import GatewayPluginKit
import Testing

/// Every order of a public request's events, tried against the machine
/// with no I/O: each sequence of up to ``depth`` events from the alphabet
/// below (every event each state may or may not take, each cost model,
/// each kind of claim), stopping where a step is refused as out of order.
/// Along every accepted sequence the rules every route relies on are
/// checked on the actions the machine asked for:
///
/// - one row per answer: an ended request wrote exactly one success row
///   (recorded) or exactly one denial (denied), and a success is answered
///   only after its row;
/// - the client is counted once, and no policy twice;
/// - the cost model's order: ``PublicRequestMachine/Cost/limitsFirst`` and
///   ``PublicRequestMachine/Cost/sendsWork`` meet the limits before the
///   work, ``PublicRequestMachine/Cost/verifyFirst`` counts its subjects
///   only once the work has answered;
/// - nothing counted against a named user before the proof, where the
///   credential proves its user;
/// - what a failure gives back: work that sends gives back what it
///   reserved unless a limit refused it; other failures keep it;
/// - a refused step changes nothing, and an ended request takes no step.
@Suite struct PublicRequestMachineTests {
    typealias Machine = PublicRequestMachine
    typealias Event = Machine.Event
    typealias Action = Machine.Action

    static let client = "203.0.113.7"
    static let depth = 5
    static let user = "ada"
    static let proven = RateLimitPolicy.provenUserSubject(user)
    static let userFailures = RateLimitPolicy.userFailures.name

    /// The claims a sign-in may make, and none (a route that is no sign-in).
    static let claims: [Machine.Claim?] = [
        nil,
        .init(namedUser: user, provesItsUser: false),
        .init(namedUser: user, provesItsUser: true),
        .init(namedUser: nil, provesItsUser: false),
        .init(namedUser: nil, provesItsUser: true),
    ]

    /// The events a route may send, for one claim; `failed(refusedByLimit: true)`
    /// is added only after a step that asked a limit (nothing else can refuse).
    static func alphabet(claim: Machine.Claim?, cost declared: Machine.Cost?) -> [Event] {
        var events: [Event] = [
            .lookingUpApp(cached: true), .lookingUpApp(cached: false), .appFound,
            .limits([RateLimitPolicy.app.name: "*"], claim: claim),
            .limits([userFailures: user], claim: claim),
            .beforeCostlyWork([RateLimitPolicy.refreshFailures.name: client]),
            .holderRefused,
            .verdict(.verified(userID: user)), .verdict(.rejected(userID: user)), .verdict(.rejected(userID: nil)),
            .lapsed, .noFault, .changeNotMade, .recordingBeside, .failed(refusedByLimit: false), .answering,
        ]
        events += Machine.Recording.allCases.map { .succeeded($0) }
        if declared == nil { events += Machine.Cost.allCases.map { .paying($0) } }
        return events
    }

    /// One accepted sequence as it went: each event and the actions it asked for.
    struct Trace {
        var steps: [(event: Event, actions: [Action], stateBefore: Machine.State)] = []
        var actions: [Action] { steps.flatMap(\.actions) }
    }

    /// What a run of the walk tried, for the closing assertions.
    struct Tally {
        var sequences = 0
        var refusedSteps = 0
        var ended: [Machine.State: Int] = [:]
        var orderedPairs: Set<String> = []
    }

    @Test func everyOrderOfEventsKeepsTheRules() throws {
        var tally = Tally()
        for declared in [nil] + Machine.Cost.allCases.map(Optional.some) {
            for claim in Self.claims {
                let alphabet = Self.alphabet(claim: claim, cost: declared)
                walk(Machine(client: Self.client, cost: declared), Trace(), alphabet: alphabet, claim: claim, &tally)
            }
        }
        // Every ordered pair of distinct events was tried from somewhere, and requests ended both ways.
        let eventKinds = Set(Self.alphabet(claim: Self.claims[1], cost: nil).map(Self.kind)).count
        #expect(tally.orderedPairs.count >= eventKinds * (eventKinds - 1) / 2)
        #expect(tally.sequences > 20_000, "\(tally.sequences) sequences")
        #expect(tally.refusedSteps > 0)
        #expect((tally.ended[.recorded] ?? 0) > 0 && (tally.ended[.denied] ?? 0) > 0)
    }

    private func walk(_ machine: Machine, _ trace: Trace, alphabet: [Event], claim: Machine.Claim?, _ tally: inout Tally) {
        tally.sequences += 1
        check(trace, machine, claim: claim)
        guard trace.steps.count < Self.depth else { return }
        var events = alphabet
        if let last = trace.steps.last, last.actions.contains(where: Self.asksALimit) {
            events.append(.failed(refusedByLimit: true))
        }
        for event in events {
            if let previous = trace.steps.last?.event { tally.orderedPairs.insert("\(Self.kind(previous))→\(Self.kind(event))") }
            var next = machine
            let before = next.state
            do {
                let actions = try next.receive(event)
                var extended = trace
                extended.steps.append((event, actions, before))
                if next.state == .recorded || next.state == .denied { tally.ended[next.state, default: 0] += 1 }
                walk(next, extended, alphabet: alphabet, claim: claim, &tally)
            } catch {
                tally.refusedSteps += 1
                #expect(next.state == before, "a refused \(event) changed the state")
                #expect(next == machine, "a refused \(event) changed the machine after \(Self.describe(trace))")
            }
        }
    }

    /// The rules, on one accepted sequence and where it left the machine.
    private func check(_ trace: Trace, _ machine: Machine, claim: Machine.Claim?) {
        let actions = trace.actions
        func path() -> String { Self.describe(trace) }
        let state = machine.state

        // One row per answer.
        let notMade = trace.steps.filter { $0.event == .changeNotMade }.count
        let successRows =
            actions.filter(Self.writesSuccess).count
            + trace.steps.filter { $0.event == .succeeded(.byTheRoute) }.count - notMade
        let denials = actions.filter { $0 == .recordDenial }.count
        #expect(successRows <= 1 && denials <= 1, "more than one row: \(path())")
        if state == .recorded { #expect(successRows == 1 && denials == 0, "recorded without its one row: \(path())") }
        if state == .denied { #expect(denials == 1, "denied without its denial: \(path())") }
        for (index, step) in trace.steps.enumerated() where step.actions.contains(.answer) {
            #expect(step.stateBefore == .recorded, "answered before its row: \(path())")
            #expect(!trace.steps[..<index].contains { $0.actions.contains(.recordDenial) }, "answered after a denial: \(path())")
        }

        // The client once, each policy once.
        let clientCounts = actions.filter(Self.countsTheClient).count
        #expect(clientCounts <= 1, "the client counted \(clientCounts) times: \(path())")
        if state == .denied || state == .recorded { #expect(clientCounts == 1, "an ended request never counted its client: \(path())") }
        var policies: [String] = []
        for action in actions {
            switch action {
            case .check(let subjects, _), .admit(let subjects, _): policies += subjects.keys
            default: break
            }
        }
        #expect(Set(policies).count == policies.count, "a policy counted twice: \(path())")

        // The cost model's order.
        let cost = machine.cost
        for (index, step) in trace.steps.enumerated() {
            guard case .verdict = step.event else { continue }
            if cost != .verifyFirst {
                #expect(trace.steps[..<index].contains { $0.actions.contains(where: Self.isCheck) }, "work before the limits: \(path())")
            }
        }
        if cost == .verifyFirst {
            for (index, step) in trace.steps.enumerated() where step.actions.contains(where: Self.countsApp) {
                let answered = trace.steps[...index].contains { step in
                    switch step.event {
                    case .verdict, .holderRefused, .lapsed, .succeeded: true
                    default: false
                    }
                }
                #expect(answered, "a verify-first request counted its limits before its work: \(path())")
            }
        }

        // Nothing against a named user before the proof.
        if let claim, claim.provesItsUser {
            for action in actions {
                switch action {
                case .check(let subjects, _), .admit(let subjects, _):
                    #expect(subjects[Self.userFailures] != Self.user, "the named user counted: \(path())")
                case .countFailure(let user), .release(readingFailuresOf: let user?):
                    #expect(user == Self.proven, "a proof's user counted as named: \(path())")
                default: break
                }
            }
        }
        // A user a password names is counted from the first count of the limits on: a verdict never comes without it.
        if let claim, claim.namedUser != nil, !claim.provesItsUser,
            trace.steps.contains(where: { if case .verdict = $0.event { true } else { false } })
        {
            let named = actions.contains { action in
                switch action {
                case .check(let subjects, _), .admit(let subjects, _): subjects[Self.userFailures] == Self.user
                default: false
                }
            }
            let rejected = trace.steps.contains { if case .verdict(.rejected) = $0.event { true } else { false } }
            let answered = rejected || actions.contains(where: Self.writesSuccess) || machine.cost != .verifyFirst
            if answered { #expect(named, "a named user's password was never counted against them: \(path())") }
        }

        // What a failure gives back.
        if let failure = trace.steps.lastIndex(where: { if case .failed = $0.event { true } else { false } }),
            trace.steps[failure].stateBefore != .recorded
        {
            let step = trace.steps[failure]
            let reserved = trace.steps[..<failure].contains { $0.actions.contains(where: Self.isCheck) }
            let gaveBack = step.actions.contains(.giveBack)
            let refused = step.event == .failed(refusedByLimit: true)
            let shownRefused = trace.steps[..<failure].contains { step in
                switch step.event {
                case .holderRefused, .verdict(.rejected), .lapsed: true
                default: false
                }
            }
            if cost == .sendsWork && reserved && !refused && !shownRefused {
                #expect(gaveBack, "work not done kept its units: \(path())")
            }
            if cost != .sendsWork || refused || shownRefused { #expect(!gaveBack, "a failure gave back its units: \(path())") }
        }
    }

    /// The three ways the machine is told a step out of order, by example,
    /// beside the exhaustive walk: a limits-first credential checked before
    /// its limits, a proof's user named in the limits, a success never limited.
    @Test func stepsOutOfOrderAreRefusedByName() throws {
        var limitsFirst = Machine(client: Self.client, cost: .limitsFirst)
        _ = try limitsFirst.receive(.lookingUpApp(cached: true))
        _ = try limitsFirst.receive(.appFound)
        #expect(throws: Machine.Misordered.self) { try limitsFirst.receive(.verdict(.verified(userID: Self.user))) }
        #expect(throws: Machine.Misordered.self) {
            try limitsFirst.receive(.limits([Self.userFailures: Self.user], claim: .init(namedUser: Self.user, provesItsUser: true)))
        }
        #expect(throws: Machine.Misordered.self) { try limitsFirst.receive(.succeeded(.withItsCounters)) }
        #expect(throws: Machine.Misordered.self) { try limitsFirst.receive(.answering) }
    }

    /// A sign-in's two costs side by side, the actions spelled out: a
    /// password checks its limits (the named user among them) first and
    /// releases them with its row; a passkey (its own proof) counts nothing
    /// until its verdict, then admits with the proof's user counted apart.
    @Test func aPasswordAndAPasskeyAskTheirLimitsInTheirOwnOrder() throws {
        var password = Machine(client: Self.client, cost: .limitsFirst)
        let named = Machine.Claim(namedUser: Self.user, provesItsUser: false)
        #expect(try password.receive(.lookingUpApp(cached: false)) == [.countClient, .lookUpApp])
        #expect(try password.receive(.appFound) == [])
        #expect(
            try password.receive(.limits(["app": "*"], claim: named))
                == [.check(["app": "*", Self.userFailures: Self.user], clientCounted: true)])
        #expect(try password.receive(.verdict(.verified(userID: Self.user))) == [])
        #expect(try password.receive(.succeeded(.withItsCounters)) == [.release(readingFailuresOf: nil)])
        #expect(try password.receive(.answering) == [.answer])

        var passkey = Machine(client: Self.client, cost: .verifyFirst)
        let proving = Machine.Claim(namedUser: Self.user, provesItsUser: true)
        #expect(try passkey.receive(.lookingUpApp(cached: true)) == [.lookUpApp])
        #expect(try passkey.receive(.appFound) == [])
        #expect(try passkey.receive(.limits(["app": "*"], claim: proving)) == [])
        #expect(try passkey.receive(.verdict(.verified(userID: Self.user))) == [])
        #expect(passkey.state == .verified)
        #expect(
            try passkey.receive(.succeeded(.withItsCounters))
                == [.admit(["app": "*", Self.userFailures: Self.proven], clientCounted: false)])

        // A passkey that fails counts the app and the proof's user then, never the named one.
        var refused = Machine(client: Self.client, cost: .verifyFirst)
        _ = try refused.receive(.lookingUpApp(cached: true))
        _ = try refused.receive(.appFound)
        _ = try refused.receive(.limits(["app": "*"], claim: proving))
        #expect(
            try refused.receive(.verdict(.rejected(userID: Self.user)))
                == [.check(["app": "*", Self.userFailures: Self.proven], clientCounted: false)])
        #expect(try refused.receive(.failed(refusedByLimit: false)) == [.recordDenial])
    }

    // MARK: - Reading actions

    static func asksALimit(_ action: Action) -> Bool {
        switch action {
        case .countClient, .check, .countFailure, .admit, .release: true
        default: false
        }
    }

    static func isCheck(_ action: Action) -> Bool {
        if case .check = action { true } else { false }
    }

    static func countsApp(_ action: Action) -> Bool {
        switch action {
        case .check(let subjects, _), .admit(let subjects, _): subjects[RateLimitPolicy.app.name] != nil
        default: false
        }
    }

    static func countsTheClient(_ action: Action) -> Bool {
        switch action {
        case .countClient: true
        case .check(_, let counted), .admit(_, let counted): !counted
        default: false
        }
    }

    static func writesSuccess(_ action: Action) -> Bool {
        switch action {
        case .admit, .release, .recordEventually: true
        default: false
        }
    }

    /// An event's name without its arguments, for the pairs tried.
    static func kind(_ event: Event) -> String {
        String(String(describing: event).prefix { $0 != "(" })
    }

    static func describe(_ trace: Trace) -> String {
        trace.steps.map { "\($0.event)" }.joined(separator: " → ")
    }
}

extension PublicRequestMachineTests {
    /// What the driver logs of a step out of order names the step, never its subjects.
    @Test func aMisorderedStepIsDescribedWithoutItsSubjects() {
        var machine = Machine(client: Self.client, cost: .limitsFirst)
        do {
            _ = try machine.receive(.limits(["code_sends_number": "+15550000001"], claim: .init(namedUser: Self.user, provesItsUser: false)))
            Issue.record("limits before the app were taken")
        } catch {
            #expect(error.description.hasPrefix("limits in opened"))
            #expect(!error.description.contains("+1555") && !error.description.contains(Self.user))
        }
    }
}
