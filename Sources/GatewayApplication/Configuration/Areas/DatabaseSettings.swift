import GatewayPostgres

/// The PostgreSQL the gateway keeps everything in (`database.*`, `migrate_on_start`).
public struct DatabaseSettings: Sendable {
    public internal(set) var url: String
    public internal(set) var maximumConnections = 20
    /// `SELECT 1` on idle connections this often; 0 never.
    public internal(set) var keepAliveSeconds = 0
    /// How long one attempt at a request's database step may take.
    public internal(set) var requestTimeoutMilliseconds = 2000
    /// How long a request waits for the database to answer again (a
    /// failover, a restart) before it is answered 503; 0 answers at the
    /// first failure.
    public internal(set) var retryWindowMilliseconds = 10_000
    /// The least time from one group commit's start to the next one's; 0 none.
    public internal(set) var commitIntervalMilliseconds = 0
    public internal(set) var migrateOnStart = false
    /// How long a migration waits for a lock before it rolls back and tries
    /// again (PostgreSQL's `lock_timeout`): how long token requests may
    /// queue behind it at worst.
    public internal(set) var migrationLockTimeoutMilliseconds = 2000

    init(_ settings: SettingsReader) {
        let url = settings.secret("database.url")
        if let url {
            do { _ = try DatabaseURL(url) } catch { settings.note("database.url", "\(error)") }
        } else {
            settings.noteLine(
                SettingsReader.label("database.url")
                    + " is required (or database.url_file), e.g. postgres://gateway:secret@127.0.0.1:5432/gateway")
        }
        self.url = url ?? ""
        maximumConnections = settings.integer("database.max_connections", in: 1...1000, default: maximumConnections)
        if settings.isSet("database.min_connections") {
            settings.noteLine(
                SettingsReader.label("database.min_connections")
                    + " is no longer read: connections open on demand, as docs/configuration.md's database.max_connections says; "
                    + "remove it")
        }
        keepAliveSeconds = settings.integer("database.keepalive_seconds", in: 0...3600, default: keepAliveSeconds)
        requestTimeoutMilliseconds = settings.integer(
            "database.request_timeout_ms", in: 100...60_000, default: requestTimeoutMilliseconds)
        retryWindowMilliseconds = settings.integer(
            "database.retry_window_ms", in: 0...120_000, default: retryWindowMilliseconds)
        commitIntervalMilliseconds = settings.integer(
            "database.commit_interval_ms", in: 0...100, default: commitIntervalMilliseconds)
        migrateOnStart = settings.boolean("migrate_on_start", default: migrateOnStart)
        migrationLockTimeoutMilliseconds = settings.integer(
            "database.migration_lock_timeout_ms", in: 50...60_000, default: migrationLockTimeoutMilliseconds)
    }
}
