public import Logging
public import PostgresNIO
public import ServiceLifecycle

/// Keeps the audit trail, the rate-limit counters and the sessions tidy:
/// monthly audit partitions exist three months ahead, partitions older than
/// the retention are dropped whole, expired counters are deleted, and so are
/// sessions revoked or past their absolute end more than
/// ``endedSessionDays`` ago (kept until then for the admin API's list of a
/// user's sessions; an idle-ended one waits for those too, so that the
/// index this reads is on no column a refresh changes), and second-step
/// tickets a day after they expired.
public struct AuditMaintenance: Service {
    public static let monthsAhead = 3
    public static let endedSessionDays = 30

    private let client: PostgresClient
    private let logger: Logger
    /// Keep events this many days; `nil` keeps them forever.
    private let retentionDays: Int?
    private let interval: Duration

    public init(client: PostgresClient, logger: Logger, retentionDays: Int?, interval: Duration = .seconds(60)) {
        self.client = client
        self.logger = logger
        self.retentionDays = retentionDays
        self.interval = interval
    }

    /// Repeats ``runOnce()`` every `interval`; the server runs the first pass
    /// itself once migrations are applied.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while (try? await Task.sleep(for: interval)) != nil {
                do {
                    try await runOnce()
                } catch {
                    logger.warning(
                        "audit maintenance failed; will retry", metadata: ["error": "\(PostgresErrorText.describe(error))"])
                }
            }
        }
    }

    /// What one pass did, for the log and `identity-gateway maintain`.
    public struct Pass: Sendable, CustomStringConvertible {
        /// Audit partitions dropped, oldest first.
        public var droppedPartitions: [String] = []
        /// Rows deleted, by table, in the order the pass went.
        public var deleted: [(table: String, rows: Int)] = []
        public var duration: Duration = .zero

        public var description: String {
            let rows = deleted.map { "\($0.table) \($0.rows)" }.joined(separator: ", ")
            let partitions = droppedPartitions.isEmpty ? "none" : droppedPartitions.joined(separator: ", ")
            return "dropped partitions: \(partitions); deleted rows: \(rows); in \(duration)"
        }
    }

    /// The most rows one `DELETE` removes: each chunk is a short transaction
    /// of its own, so a pass that finds millions of ended sessions (the first
    /// after a long stop, or after a retention was shortened) never holds a
    /// statement open for minutes, nor writes its WAL in one burst that the
    /// ledger's commits queue behind. After each chunk the pass rests as long
    /// as the chunk took, so it takes at most half of the database's time
    /// the way autovacuum's cost delay does: nothing it deletes is urgent.
    public static let deleteChunk = 5_000

    /// One pass; returns what it did.
    @discardableResult
    public func runOnce() async throws -> Pass {
        let started = ContinuousClock.now
        var pass = Pass()
        try await client.tracedQuery("SELECT audit_events_ensure_partitions(now()::date, \(Self.monthsAhead)::int)", logger: logger)
        if let retentionDays {
            pass.droppedPartitions = try await dropPartitions(before: retentionDays)
            if !pass.droppedPartitions.isEmpty {
                logger.notice("dropped old audit partitions", metadata: ["partitions": "\(pass.droppedPartitions)"])
            }
        }
        // Counters whose windows can no longer weigh in any verdict.
        pass.deleted.append(("rate_limit_counters", try await deleteInChunks(from: "rate_limit_counters", where: "expires_at < now()")))
        pass.deleted.append(
            ("sessions",
             try await deleteInChunks(
                from: "sessions",
                where: "least(coalesce(revoked_at, expires_at), expires_at) < now() - make_interval(days => \(Self.endedSessionDays))")))
        // Human-check tokens once no provider would take them again.
        pass.deleted.append(("human_check_tokens", try await deleteInChunks(from: "human_check_tokens", where: "expires_at < now()")))
        // Second-step tickets a day after they expired (spent or not): kept that long for an incident's questions.
        pass.deleted.append(("mfa_tickets", try await deleteInChunks(from: "mfa_tickets", where: "expires_at < now() - interval '1 day'")))
        pass.duration = ContinuousClock.now - started
        return pass
    }

    /// Detaches each partition past the retention CONCURRENTLY, which
    /// inserts into `audit_events` never wait for, then drops it alone. One
    /// replica at a time (a session advisory lock, tried, not waited for:
    /// the others leave it to the one holding it), since two replicas
    /// detaching one partition deadlock (40P01, seen in
    /// `twoReplicasPassesDropThePartitionsOnce`). A detach cut short before
    /// is finished; a partition another replica detached is dropped alone.
    private func dropPartitions(before retentionDays: Int) async throws -> [String] {
        try await client.withConnection { connection in
            let held = try await connection.tracedQuery(
                "SELECT pg_try_advisory_lock(\(unescaped: String(Self.dropLockKey)))", logger: logger)
            guard try held.first?.decode(Bool.self) == true else { return [] }
            do {
                let dropped = try await dropPartitions(before: retentionDays, on: connection)
                _ = try await connection.tracedQuery("SELECT pg_advisory_unlock(\(unescaped: String(Self.dropLockKey)))", logger: logger)
                return dropped
            } catch {
                // The lock is the session's: a connection that failed mid-way took it with it; otherwise let it go.
                _ = try? await connection.tracedQuery(
                    "SELECT pg_advisory_unlock(\(unescaped: String(Self.dropLockKey)))", logger: logger)
                throw error
            }
        }
    }

    /// The advisory lock one replica's partition drops hold ("idgwdrop").
    static let dropLockKey: Int64 = 7_594_308_634_337_702_517

    private func dropPartitions(before retentionDays: Int, on connection: PostgresConnection) async throws -> [String] {
        let names = try await connection.tracedQuery(
            "SELECT audit_events_partitions_before(now() - make_interval(days => \(retentionDays)::int))", logger: logger
        ).decode(String.self).map { $0 }
        var dropped: [String] = []
        for name in names {
            let table = "\"\(name)\""  // Names match ^audit_events_[0-9]{4}_[0-9]{2}$: nothing to escape.
            do {
                _ = try await connection.tracedQuery(
                    "ALTER TABLE audit_events DETACH PARTITION \(unescaped: table) CONCURRENTLY", logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55000" {
                // "already pending detach": a detach cut short (its replica stopped); finish it.
                _ = try await connection.tracedQuery("ALTER TABLE audit_events DETACH PARTITION \(unescaped: table) FINALIZE", logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
                // Gone, or no longer a partition: dropping it alone locks nothing shared.
            }
            _ = try await connection.tracedQuery("DROP TABLE IF EXISTS \(unescaped: table)", logger: logger)
            dropped.append(name)
        }
        return dropped
    }

    /// Deletes the rows of `table` matching `condition`, at most
    /// ``deleteChunk`` a statement, until a statement finds fewer; returns how many.
    private func deleteInChunks(from table: String, where condition: String) async throws -> Int {
        var total = 0
        while true {
            let started = ContinuousClock.now
            let rows = try await client.tracedQuery(
                """
                WITH gone AS (
                    DELETE FROM \(unescaped: table) WHERE ctid IN (
                        SELECT ctid FROM \(unescaped: table) WHERE \(unescaped: condition) LIMIT \(unescaped: String(Self.deleteChunk)))
                    RETURNING 1)
                SELECT count(*)::int8 FROM gone
                """, logger: logger)
            let count = Int(try rows.first?.decode(Int64.self) ?? 0)
            total += count
            if count < Self.deleteChunk { return total }
            try await Task.sleep(for: ContinuousClock.now - started)
        }
    }
}
