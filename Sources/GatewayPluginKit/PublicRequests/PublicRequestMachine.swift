import GatewayCore

/// The order of one public request, decided without I/O: each step a route
/// takes is an ``Event``, and the machine answers with the ``Action``s the
/// driver (``PublicRequest``) runs, in order, against the limits and the
/// audit trail. What may follow what lives here and nowhere else, so the
/// rules every route shares are transitions a unit test tries exhaustively
/// (`PublicRequestMachineTests`):
///
/// - **One row per answer.** A request ends either recorded (its success
///   row, written once) or denied (its denial, written once); a success is
///   answered only once recorded, so no token leaves before its row. A
///   failure after the success row (the answer a client then gets is the
///   failure) is recorded as a denial too: the trail shows what was answered.
/// - **The client is counted once**, under the deployment's `ip` policy,
///   wherever first: before the lookup of an app not in memory, with the
///   app's limits, or when the request fails before either.
/// - **The cost model decides the order of limits and work** (``Cost``),
///   declared once per route or credential.
/// - **Nothing is counted against a named user before the proof** when the
///   credential proves its own user (``Claim/provesItsUser``): the user the
///   proof found is counted apart (``RateLimitPolicy/provenUserSubject(_:)``).
///
/// A step out of order is a bug in the route, not the client's doing: it
/// is thrown as ``Misordered`` and answered 500.
public struct PublicRequestMachine: Sendable, Equatable {
    /// How a route's or a credential's work is paid for.
    public enum Cost: Sendable, Equatable, CaseIterable {
        /// The app's limits before the work (a password's hash, a webhook, a
        /// code compared): each failure policy reserves its unit first, and a
        /// failure keeps it.
        case limitsFirst
        /// The work first, since it costs microseconds (a static user, a
        /// signature, a refresh token's digest): the success row's statement is
        /// also the limits' check, written only if they allow; a failure is
        /// counted when it is known.
        case verifyFirst
        /// The limits before work that costs the tenant (an SMS, a mail): the
        /// units count what was sent, so a failure that no limit refused
        /// gives them back.
        case sendsWork
    }

    /// Who a sign-in names and whether its credential proves that user
    /// itself (a passkey, an ID token) rather than only naming them (a password).
    public struct Claim: Sendable, Equatable {
        public var namedUser: String?
        public var provesItsUser: Bool

        public init(namedUser: String?, provesItsUser: Bool) {
            self.namedUser = namedUser
            self.provesItsUser = provesItsUser
        }

        /// Whether the named user's failure count is the request's from the start.
        var countsNamedUser: Bool { namedUser != nil && !provesItsUser }
    }

    /// What a credential's check found.
    public enum Verdict: Sendable, Equatable {
        case verified(userID: String)
        /// Refused (or not answered); `userID` is the user the check found, if it named one.
        case rejected(userID: String?)
    }

    /// How a success's row is written.
    public enum Recording: Sendable, Equatable, CaseIterable {
        /// In one statement with the request's counters (a token, a ticket, a
        /// sign-out): the limits' check for ``Cost/verifyFirst``, for the
        /// others the statement that gives back what they reserved.
        case withItsCounters
        /// By the route's own statement, with the change it records (an
        /// enrolment, a passkey); what the limits reserved is given back as
        /// ``withItsCounters`` gives it.
        case byTheRoute
        /// Kept and written later: the answer does not wait on it (a code
        /// sent: it has left already; a refusal answered alike). What the
        /// limits counted stays counted.
        case eventually
    }

    /// Where the request is.
    public enum State: Sendable, Equatable {
        case opened
        /// Its app is found; the app's limits have not met it.
        case appFound
        /// The app's limits have met it (units reserved where a policy reserves).
        case reserved
        /// Its credential is proved, the limits still to meet it in the row's statement (``Cost/verifyFirst``).
        case verified
        case recorded
        case denied
    }

    public enum Event: Sendable, Equatable {
        /// The route names its cost model; once, before the app's limits.
        case paying(Cost)
        /// The app is looked up, in memory or not.
        case lookingUpApp(cached: Bool)
        case appFound
        /// The route's subjects for the app's limits (policy name → subject),
        /// with who a sign-in names: checked now, or (``Cost/verifyFirst``)
        /// held for the row's statement. More may follow, before the work.
        case limits([String: String], claim: Claim?)
        /// Counted now whatever the cost model: a suspicion paid for before
        /// a costly step (walking a refresh token's family).
        case beforeCostlyWork([String: String])
        /// What proves who asks (a session's refresh token, a sign-in's
        /// ticket) was refused: counted with the client's `refresh_failures`.
        case holderRefused
        /// A sign-in's credential check answered.
        case verdict(Verdict)
        /// The verified user changed while the request ran (deleted,
        /// disabled, a new password): refused, counted as a rejection.
        case lapsed
        /// The request's own failure is not the client's (no active key, no
        /// code sent): what it reserved is given back.
        case noFault
        case succeeded(Recording)
        /// A success's statement did not write its row: the session change
        /// it asked for was not made (another request spent the token). The
        /// request reads again and may succeed once more; what it counted stays counted.
        case changeNotMade
        /// A row of its own beside the request's (a session ended for reuse).
        case recordingBeside
        /// The request failed; `refusedByLimit` when a limit refused it.
        case failed(refusedByLimit: Bool)
        /// The success is about to be answered.
        case answering
    }

    public enum Action: Sendable, Equatable {
        /// The client under the deployment's `ip` policy alone.
        case countClient
        case lookUpApp
        /// The app's limits on these subjects (and the client, unless counted).
        case check([String: String], clientCounted: Bool)
        /// One more failure of a user found by the check.
        case countFailure(ofUser: String)
        /// The limits on these subjects and the success row, in one statement, the row only if they allow.
        case admit([String: String], clientCounted: Bool)
        /// The reservations given back and the success row, in one statement;
        /// `readingFailuresOf` the user whose failure limit that statement reads.
        case release(readingFailuresOf: String?)
        case giveBack
        case recordEventually
        case recordBeside
        case recordDenial
        case answer
    }

    /// A step the machine does not take from where the request is.
    public struct Misordered: Error, Sendable, Equatable, CustomStringConvertible {
        public let event: Event
        public let state: State
        public let why: String
        /// The event by name alone: its subjects (user ids, numbers, addresses) stay out of logs.
        public var description: String { "\(stepName(event)) in \(state): \(why)" }
    }

    /// The client's address as the limits count it.
    public let client: String
    public private(set) var cost: Cost?
    public private(set) var clientCounted = false
    private var phase = Phase.opened
    /// Whether a check has met the request (so a success releases rather than admits).
    private var checked = false
    /// Policies the limits have counted for this request.
    private var counted: Set<String> = []
    /// Subjects declared and not yet counted (``Cost/verifyFirst``).
    private var pending: [String: String] = [:]
    private var claim: Claim?
    private var verdict: Verdict?
    /// The success statement last asked for, for ``Event/changeNotMade``.
    private var admitted = false
    /// Whether a success's statement was asked for (so no more limits may be declared).
    private var successTried = false
    /// Whether what the client showed was refused (a holder, a credential, a lapsed user).
    private var credentialRefused = false

    private enum Phase: Equatable { case opened, appFound, recorded, denied }

    public init(client: String, cost: Cost? = nil) {
        self.client = client
        self.cost = cost
    }

    public var state: State {
        switch phase {
        case .opened: .opened
        case .recorded: .recorded
        case .denied: .denied
        case .appFound:
            if case .verified = verdict, cost == .verifyFirst { .verified } else if checked { .reserved } else { .appFound }
        }
    }

    /// The subject the user found by the check is counted under: none when
    /// the named user is counted already; apart when the credential proves its user.
    var foundUserSubject: String? {
        guard let claim, !claim.countsNamedUser else { return nil }
        let found: String? =
            switch verdict {
            case .verified(let userID): userID
            case .rejected(let userID): userID
            case nil: nil
            }
        return found.map { claim.provesItsUser ? RateLimitPolicy.provenUserSubject($0) : $0 }
    }

    public mutating func receive(_ event: Event) throws(Misordered) -> [Action] {
        func misordered(_ why: String) -> Misordered { Misordered(event: event, state: state, why: why) }
        switch (event, phase) {
        case (.failed(let refusedByLimit), .opened), (.failed(let refusedByLimit), .appFound):
            var actions: [Action] = []
            if !clientCounted && !refusedByLimit {
                clientCounted = true
                actions.append(.countClient)
            }
            // Work not done gives back what it reserved, unless the client's own proof was refused.
            if cost == .sendsWork && checked && !refusedByLimit && !credentialRefused { actions.append(.giveBack) }
            phase = .denied
            return actions + [.recordDenial]
        case (.failed, .recorded):
            // Answered a failure after all (a change the request found after its row): the trail says so.
            phase = .denied
            return [.recordDenial]
        case (_, .denied):
            throw misordered("the request has ended")

        case (.paying(let declared), .opened), (.paying(let declared), .appFound):
            guard cost == nil else { throw misordered("the cost model is declared once") }
            cost = declared
            return []

        case (.lookingUpApp(let cached), .opened):
            if cached || clientCounted { return [.lookUpApp] }
            clientCounted = true
            return [.countClient, .lookUpApp]
        case (.appFound, .opened):
            phase = .appFound
            return []
        case (.recordingBeside, .recorded):
            return [.recordBeside]
        case (.answering, .recorded):
            return [.answer]
        case (.changeNotMade, .recorded):
            guard admitted else { throw misordered("only a statement that admits may find its change not made") }
            admitted = false
            phase = .appFound
            return []
        case (_, .opened):
            throw misordered("the app is not found yet")
        case (_, .recorded):
            throw misordered("the request's row is written")

        case (.recordingBeside, .appFound):
            return [.recordBeside]
        case (.succeeded(.eventually), .appFound) where credentialRefused:
            // A refusal answered alike (a sign-out that ended nothing): its row says why, its counts stay.
            phase = .recorded
            return [.recordEventually]
        case (_, .appFound) where credentialRefused:
            // What the client showed was refused: the request can only end as a failure, or be answered alike.
            throw misordered("the request was refused")

        case (.limits(let subjects, let declaredClaim), .appFound):
            guard let cost else { throw misordered("no cost model declared") }
            guard verdict == nil, !successTried else { throw misordered("the app's limits come before the verdict and the success") }
            if let declaredClaim, claim != nil, claim != declaredClaim { throw misordered("a request names one user") }
            var subjects = subjects
            if let claim = declaredClaim ?? claim {
                if claim.provesItsUser && subjects[RateLimitPolicy.userFailures.name] != nil {
                    throw misordered("a user the credential proves is counted only after the proof")
                }
                if claim.countsNamedUser, let named = claim.namedUser { subjects[RateLimitPolicy.userFailures.name] = named }
                self.claim = claim
            }
            if cost == .verifyFirst {
                pending.merge(subjects) { _, new in new }
                return []
            }
            return check(subjects)
        case (.beforeCostlyWork(let subjects), .appFound):
            return check(subjects)
        case (.holderRefused, .appFound):
            guard verdict == nil else { throw misordered("a holder is refused before the verdict") }
            credentialRefused = true
            return check(pending.merging([RateLimitPolicy.refreshFailures.name: client]) { own, _ in own })
        case (.verdict(let found), .appFound):
            guard let cost, claim != nil else { throw misordered("a verdict answers a sign-in's claim") }
            guard verdict == nil else { throw misordered("a credential is checked once") }
            guard cost == .verifyFirst || checked else { throw misordered("the app's limits come before this work") }
            verdict = found
            guard case .rejected = found else { return [] }
            credentialRefused = true
            return countRejection()
        case (.lapsed, .appFound):
            guard case .verified = verdict else { throw misordered("only a verified user lapses") }
            credentialRefused = true
            return countRejection()
        case (.noFault, .appFound):
            guard checked else { return [] }
            return [.giveBack]
        case (.succeeded(let recording), .appFound):
            guard let cost else { throw misordered("no cost model declared") }
            if case .rejected = verdict { throw misordered("a rejected credential does not succeed") }
            if claim != nil, verdict == nil { throw misordered("a sign-in succeeds only once its credential is verified") }
            switch recording {
            case .withItsCounters where cost == .verifyFirst:
                var subjects = pending
                if let proven = foundUserSubject { subjects[RateLimitPolicy.userFailures.name] = proven }
                subjects = subjects.filter { !counted.contains($0.key) }
                let actions: [Action] = [.admit(subjects, clientCounted: clientCounted)]
                counted.formUnion(subjects.keys)
                clientCounted = true
                admitted = true
                successTried = true
                phase = .recorded
                return actions
            case .withItsCounters:
                guard checked else { throw misordered("the app's limits never met the request") }
                phase = .recorded
                return [.release(readingFailuresOf: foundUserSubject)]
            case .byTheRoute, .eventually:
                guard clientCounted, pending.keys.allSatisfy(counted.contains) else {
                    throw misordered("the app's limits never met the request")
                }
                phase = .recorded
                if recording == .eventually { return [.recordEventually] }
                return checked && cost == .limitsFirst ? [.giveBack] : []
            }
        case (.changeNotMade, .appFound):
            throw misordered("no statement was asked to write the row")
        case (.answering, .appFound):
            throw misordered("a success is answered only once its row is written")
        case (.lookingUpApp, .appFound), (.appFound, .appFound):
            throw misordered("the app is found once")
        }
    }

    /// The check of `subjects` not counted yet for this request, with the client unless counted.
    private mutating func check(_ subjects: [String: String]) -> [Action] {
        let fresh = subjects.filter { !counted.contains($0.key) }
        let first = !clientCounted
        clientCounted = true
        checked = true
        counted.formUnion(fresh.keys)
        pending = pending.filter { !counted.contains($0.key) }
        guard first || !fresh.isEmpty else { return [] }
        return [.check(fresh, clientCounted: !first)]
    }

    /// A rejection's count: the held subjects and the found user's failure
    /// (``Cost/verifyFirst``), or the found user's failure beside the
    /// reservations already taken, which stay as the failure's count.
    private mutating func countRejection() -> [Action] {
        let user = foundUserSubject
        if cost == .verifyFirst {
            var subjects = pending
            if let user { subjects[RateLimitPolicy.userFailures.name] = user }
            return check(subjects)
        }
        return user.map { [.countFailure(ofUser: $0)] } ?? []
    }
}

/// A step's name without its arguments (`limits`, `check`): what a log may say of it.
func stepName(_ step: some Sendable) -> String {
    String(String(describing: step).prefix { $0 != "(" })
}
