public import Foundation
public import GatewayCore
import Synchronization

/// The gateway's stores in memory, for tests of the HTTP layer that need no
/// database: each change and its audit row land together, as in
/// PostgreSQL, and ``events`` is the audit trail they wrote. ``failing``
/// makes every call throw 503 `unavailable`, as a lost database does.
public final class InMemoryStores: Sendable {
    /// What the stores hold (the second factors' store, in its own file, reaches it too).
    struct State {
        var apps: [AppID: StoredApp] = [:]
        var keys: [AppID: [StoredKey]] = [:]
        var tokens: [UUID: (record: AdminTokenRecord, digest: Data)] = [:]
        var counters = MemoryCounters()
        var events: [AuditEvent] = []
        var consoleSessions: [Data: ConsoleSessionRecord] = [:]
        var userSessions = MemorySessions()
        var factors: [String: (factor: StoredSecondFactor, codes: [[UInt8]: Date?])] = [:]
        var tickets: [[UInt8]: StoredMFATicket] = [:]
        var sessionReads = 0
        var failing = false
    }

    private let state = Mutex(State())
    /// The user changes not every holder has heard yet.
    public let userChanges = MemoryUserChanges()

    public init() {}

    /// Every audit row written, oldest first.
    public var events: [AuditEvent] { state.withLock { $0.events } }

    /// How many times a user's session was read by its id (``SessionStore/find(_:in:)``).
    public var sessionReads: Int { state.withLock { $0.sessionReads } }

    /// While `true`, every store call throws.
    public var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    /// The user session `sessionID`, whatever its app.
    public func session(_ sessionID: UUID) -> StoredSession? {
        state.withLock { $0.userSessions.find(sessionID) }
    }

    /// Changes the user session `sessionID` outside any rule (a test moving
    /// its clock); throws when there is no such session.
    public func amendSession(_ sessionID: UUID, _ change: (inout StoredSession) -> Void) throws {
        let found = state.withLock { $0.userSessions.amend(sessionID, change) }
        if !found { throw NoSuchSession(sessionID: sessionID) }
    }

    /// What ``amendSession(_:_:)`` throws for a session that is not there.
    public struct NoSuchSession: Error {
        public let sessionID: UUID
    }

    /// Appends an audit row, as a plugin's in-memory table does beside its change.
    public func record(_ event: AuditEvent) throws {
        try change { $0.events.append(event) }
    }

    /// The set the gateway's routes take.
    public var stores: GatewayStores {
        GatewayStores(
            apps: Apps(memory: self), keys: Keys(memory: self), adminTokens: AdminTokens(memory: self),
            auditTrail: Trail(), tenants: Tenants(memory: self), ledger: Ledger(memory: self), health: Health(memory: self),
            consoleSessions: ConsoleSessions(memory: self), sessions: UserSessions(memory: self),
            secondFactors: SecondFactors(memory: self), userChanges: userChanges)
    }

    /// Runs `body` on the state unless ``failing``.
    func change<Result>(_ body: (inout State) throws -> Result) throws -> Result {
        try state.withLock { state in
            guard !state.failing else { throw GatewayError.unavailable }
            return try body(&state)
        }
    }

    struct Apps: AppStore {
        let memory: InMemoryStores

        func find(_ appID: AppID) async throws -> StoredApp? { try memory.change { $0.apps[appID] } }

        func list(only appID: AppID?, nameContaining: String?, after cursor: AppID?, limit: Int) async throws -> [StoredApp] {
            try memory.change { state in
                state.apps.values.filter { appID == nil || $0.settings.appID == appID }
                    .filter { nameContaining == nil || $0.settings.name.lowercased().contains(nameContaining!.lowercased()) }
                    .filter { cursor == nil || $0.settings.appID.uuid.uuidString > cursor!.uuid.uuidString }
                    .sorted { $0.settings.appID.uuid.uuidString < $1.settings.appID.uuid.uuidString }
                    .prefix(limit).map { $0 }
            }
        }

        func create(_ app: AppSettings, recording event: AuditEvent) async throws -> Bool {
            try memory.change { state in
                guard state.apps[app.appID] == nil else { return false }
                state.apps[app.appID] = StoredApp(settings: app, createdAt: Date(), updatedAt: Date())
                state.events.append(event)
                return true
            }
        }

        func update(
            _ appID: AppID, recording event: AuditEvent, _ change: @escaping @Sendable (StoredApp) throws -> AppSettings
        ) async throws -> StoredApp? {
            try memory.change { state in
                guard let current = state.apps[appID] else { return nil }
                let stored = StoredApp(settings: try change(current), createdAt: current.createdAt, updatedAt: Date())
                state.apps[appID] = stored
                state.events.append(event)
                return stored
            }
        }

        func delete(_ appID: AppID, recording event: AuditEvent) async throws -> Bool {
            try memory.change { state in
                guard state.apps.removeValue(forKey: appID) != nil else { return false }
                state.keys[appID] = nil
                state.events.append(event)
                return true
            }
        }
    }

    struct Keys: KeyStore {
        let memory: InMemoryStores

        func key(_ keyID: KeyID, of appID: AppID) async throws -> StoredKey? {
            try memory.change { $0.keys[appID, default: []].first { $0.keyID == keyID } }
        }

        func keys(of appID: AppID) async throws -> [StoredKey] { try memory.change { $0.keys[appID, default: []] } }

        func publicKeyPEM(issuer: ProviderID, keyID: KeyID) async throws -> (appID: AppID, pem: String)? {
            try memory.change { state in
                guard let app = state.apps.values.first(where: { $0.settings.providerID == issuer })?.settings.appID,
                    let key = state.keys[app, default: []].first(where: { $0.keyID == keyID })
                else { return nil }
                return (app, key.publicKeyPEM)
            }
        }

        func add(
            to appID: AppID, _ seal: @Sendable (KeyStatus) throws -> StoredKey,
            recording describe: @Sendable (StoredKey) -> AuditEvent
        ) async throws -> KeyAddition {
            try memory.change { state in
                guard state.apps[appID] != nil else { return .appNotFound }
                let held = state.keys[appID, default: []]
                guard held.count < StoredKey.maximumPerApp else { return .full }
                let key = try seal(held.contains { $0.status == .active } ? .next : .active)
                // A key id names one key in the whole deployment, as PostgreSQL's unique index says (23505).
                if state.keys.values.contains(where: { $0.contains { $0.keyID == key.keyID } }) {
                    throw GatewayError(.conflict, .conflict, "That conflicts with what is stored (the id is taken or the parent is gone).")
                }
                state.keys[appID, default: []].insert(key, at: 0)
                state.events.append(describe(key))
                return .added(key)
            }
        }

        func activate(_ keyID: KeyID, of appID: AppID, recording event: AuditEvent) async throws -> Bool {
            try memory.change { state in
                guard state.keys[appID, default: []].contains(where: { $0.keyID == keyID }) else { return false }
                state.keys[appID] = state.keys[appID, default: []].map { key in
                    var key = key
                    if key.keyID == keyID { key.status = .active } else if key.status == .active { key.status = .retired }
                    return key
                }
                state.events.append(event)
                return true
            }
        }

        func delete(_ keyID: KeyID, of appID: AppID, recording event: AuditEvent) async throws -> KeyDeletion {
            try memory.change { state in
                guard let key = state.keys[appID, default: []].first(where: { $0.keyID == keyID }) else { return .notFound }
                guard key.status != .active else { return .refusedActive }
                state.keys[appID, default: []].removeAll { $0.keyID == keyID }
                state.events.append(event)
                return .deleted
            }
        }
    }

    struct AdminTokens: AdminTokenStore {
        let memory: InMemoryStores

        func authenticate(_ secret: AdminTokenSecret) async throws -> AdminTokenRecord? {
            try memory.change { state in
                state.tokens.values.first { entry in
                    entry.digest == secret.digest && entry.record.revokedAt == nil
                        && (entry.record.expiresAt.map { $0 > Date() } ?? true)
                }?.record
            }
        }

        func list(after cursor: UUID?, limit: Int) async throws -> [AdminTokenRecord] {
            try memory.change { state in
                state.tokens.values.map(\.record).sorted { $0.id.uuidString < $1.id.uuidString }
                    .filter { cursor == nil || $0.id.uuidString > cursor!.uuidString }.prefix(limit).map { $0 }
            }
        }

        func create(_ record: AdminTokenRecord, secret: AdminTokenSecret, recording event: AuditEvent) async throws {
            try memory.change { state in
                state.tokens[record.id] = (record, secret.digest)
                state.events.append(event)
            }
        }

        func revoke(_ id: UUID, recording event: AuditEvent) async throws -> Bool {
            try memory.change { state in
                guard var entry = state.tokens[id], entry.record.revokedAt == nil else { return false }
                entry.record.revokedAt = Date()
                state.tokens[id] = entry
                state.events.append(event)
                return true
            }
        }
    }

    /// Reading the trail back is PostgreSQL's (its tests are there); here it is empty.
    struct ConsoleSessions: ConsoleSessionStore {
        let memory: InMemoryStores

        func open(_ session: ConsoleSessionRecord) async throws {
            try memory.change { $0.consoleSessions[session.digest] = session }
        }

        func resume(digest: Data, idle: Duration) async throws -> Data? {
            try memory.change { state in
                guard var session = state.consoleSessions[digest], session.expiresAt > Date() else { return nil }
                session.expiresAt = min(Date() + TimeInterval(idle.components.seconds), session.endsAt)
                state.consoleSessions[digest] = session
                return session.sealedToken
            }
        }

        func close(digest: Data) async throws {
            try memory.change { $0.consoleSessions[digest] = nil }
        }
    }

    /// Users' sessions in ``MemorySessions``, changed as the SQL changes them.
    struct UserSessions: SessionStore {
        let memory: InMemoryStores

        func find(_ sessionID: UUID, in appID: AppID) async throws -> SessionLookup {
            try memory.change {
                $0.sessionReads += 1
                return SessionLookup(session: $0.userSessions.find(sessionID, in: appID), now: Date())
            }
        }

        func list(of userID: String, in appID: AppID, includingEnded: Bool, at now: Date) async throws -> [StoredSession] {
            try memory.change { $0.userSessions.list(of: userID, in: appID, includingEnded: includingEnded, at: now) }
        }

        func revoke(_ scope: SessionScope, reason: String, recording row: AuditEvent) async throws -> Int {
            try memory.change { state in
                let count = state.userSessions.revoke(scope, reason: reason, at: Date())
                if case .session = scope, count == 0 { return 0 }
                var event = row
                event.detail["revoked"] = "\(count)"
                event.detail["reason"] = reason
                state.events.append(event)
                return count
            }
        }
    }

    struct Trail: AuditTrail {
        func page(_ filter: AuditFilter, after position: StoredAuditEvent.Position?, limit: Int) async throws
            -> [StoredAuditEvent]
        { [] }

        func tokenCountsPerMinute(appID: AppID?, from: Date, to: Date) async throws -> [AuditMinuteCount] { [] }
    }

    struct Tenants: TenantStore {
        let memory: InMemoryStores

        func app(_ appID: AppID) async throws -> StoredApp? { try memory.change { $0.apps[appID] } }
        func keys(of appID: AppID) async throws -> [StoredKey] { try memory.change { $0.keys[appID, default: []] } }
        func versions() async throws -> [AppID: AppVersion]? {
            try memory.change { state in
                state.apps.mapValues { AppVersion(app: $0, keys: state.keys[$0.settings.appID, default: []]) }
            }
        }
    }

    /// Counters in ``MemoryCounters``, each touch as ``SlidingWindow/touch(_:current:previous:)`` says.
    struct Ledger: RequestLedger {
        let memory: InMemoryStores

        func count(_ touches: [CounterTouch]) async throws -> [CounterReading] {
            try memory.change { state in touches.map { state.counters.apply($0) } }
        }

        func countAndRecord(
            _ touches: [CounterTouch], ifAllowed event: AuditEvent, changing session: SessionChange?
        ) async throws -> Admission {
            try memory.change { state in
                let readings = touches.map { state.counters.apply($0) }
                let allowed = readings.allSatisfy(\.allowed)
                var changed = false
                var admitted = allowed
                switch session {
                case nil:
                    break
                case .start?:
                    if allowed { changed = state.userSessions.apply(session!, at: Date()) }
                case .rotate?:
                    changed = allowed && state.userSessions.apply(session!, at: Date())
                    admitted = changed
                case .revoke?:
                    changed = state.userSessions.apply(session!, at: Date())
                    admitted = true
                }
                if admitted { state.events.append(event) }
                return Admission(counts: readings, admitted: admitted, sessionChanged: changed)
            }
        }

        func record(_ event: AuditEvent) async throws {
            try memory.change { $0.events.append(event) }
        }

        func recordEventually(_ event: AuditEvent) async {
            memory.state.withLock { $0.events.append(event) }
        }
    }

    struct Health: StorageHealth {
        let memory: InMemoryStores

        func ping() async throws { try memory.change { _ in () } }
        var keptAuditRows: (oldestAge: Duration, count: Int)? { nil }
    }
}
