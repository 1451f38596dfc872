public import GatewayCore
public import Logging
import Synchronization

/// Where a plugin keeps its own tables. A plugin reaches them through a
/// store protocol of its own with one implementation for each case: its SQL
/// for `.database` (the tables its migrations made), plain values for
/// `.memory`, so its logic is tested without a database and its SQL with one.
public enum PluginStorage: Sendable {
    /// The gateway's database: what a running gateway lends. A plugin's SQL
    /// reads its client through the adapter that made it
    /// (`GatewayPluginPostgres`: `PluginStorage.postgres(_:)`, `PluginDatabase.postgres`),
    /// so the plugin API itself names no database driver.
    case database(PluginDatabase)
    /// Tables in memory, beside the in-memory stores of the gateway's tests.
    case memory(PluginMemory)
}

/// The gateway's database as the plugin API carries it: the driver's
/// client, opaque here, and how an audit row is written alone. Only this
/// package makes one (its initializer is `package`), and in it only the
/// adapter (`PluginStorage.postgres(_:)`), so the adapter's reading of its
/// own client back cannot meet another kind: no plugin, in this package or
/// outside it, can hand the gateway a database the adapter did not make.
public struct PluginDatabase: Sendable {
    /// The driver's client, for the adapter that made this to hand back.
    package let connection: any Sendable
    private let writeAlone: @Sendable (AuditEvent, Logger) async throws -> Void

    /// - Parameter writeAlone: writes one audit row in a transaction of its own.
    package init(connection: any Sendable, writeAlone: @escaping @Sendable (AuditEvent, Logger) async throws -> Void) {
        self.connection = connection
        self.writeAlone = writeAlone
    }

    /// Writes an audit row alone.
    public func record(_ event: AuditEvent, logger: Logger) async throws {
        try await writeAlone(event, logger)
    }
}

/// The in-memory tables of every plugin of one gateway, and where their audit
/// rows go. A change and its row land together, as in one transaction.
public final class PluginMemory: Sendable {
    private let tables = Mutex<[ObjectIdentifier: any Sendable]>([:])
    private let append: @Sendable (AuditEvent) throws -> Void

    /// `append` adds an audit row to the trail the gateway's own stores
    /// write; it throws when the storage is out (as a lost database would).
    public init(recording append: @escaping @Sendable (AuditEvent) throws -> Void) {
        self.append = append
    }

    /// Writes an audit row alone.
    public func record(_ event: AuditEvent) throws {
        try append(event)
    }

    /// The table whose rows are `Rows`, empty at first; one per gateway.
    public func table<Rows: Sendable>(of _: Rows.Type, empty: @autoclosure () -> Rows) -> MemoryTable<Rows> {
        tables.withLock { tables in
            if let table = tables[ObjectIdentifier(Rows.self)] as? MemoryTable<Rows> { return table }
            let table = MemoryTable(empty(), append: append)
            tables[ObjectIdentifier(Rows.self)] = table
            return table
        }
    }
}

/// One plugin table in memory: its rows behind a lock.
public final class MemoryTable<Rows: Sendable>: Sendable {
    private let rows: Mutex<Rows>
    private let append: @Sendable (AuditEvent) throws -> Void

    init(_ rows: Rows, append: @escaping @Sendable (AuditEvent) throws -> Void) {
        self.rows = Mutex(rows)
        self.append = append
    }

    /// Reads or changes the rows; no other change runs meanwhile.
    public func change<Result>(_ body: (inout Rows) throws -> Result) rethrows -> Result {
        try rows.withLock { try body(&$0) }
    }

    /// Changes the rows and records the audit row `describe` makes of the
    /// result, if any, before any other change runs. When the row cannot be
    /// recorded, the change is undone and the error thrown.
    public func change<Result>(
        _ body: (inout Rows) throws -> Result, recording describe: (Result) -> AuditEvent?
    ) throws -> Result {
        try rows.withLock { rows in
            var changed = rows
            let result = try body(&changed)
            if let event = describe(result) { try append(event) }
            rows = changed
            return result
        }
    }
}
