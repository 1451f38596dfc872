/// The apps, as the admin API reads and changes them. Every change commits
/// together with its audit row, or neither does.
public protocol AppStore: Sendable {
    /// The app, or `nil` when no app has that id.
    func find(_ appID: AppID) async throws -> StoredApp?
    /// Apps in app id order after `cursor`; only `appID` when given, only
    /// those whose name contains `nameContaining` (any case) when given.
    func list(only appID: AppID?, nameContaining: String?, after cursor: AppID?, limit: Int) async throws -> [StoredApp]
    /// Creates the app and records `event`; `false` (nothing recorded) when the id is taken.
    func create(_ app: AppSettings, recording event: AuditEvent) async throws -> Bool
    /// Changes the app in one transaction: reads its row locked against other
    /// writers, hands it to `change` (which checks what the caller may change
    /// and returns the new settings, or throws to leave everything as it was),
    /// stores the result and records `event`. So a check and its write see the
    /// same row, and a concurrent change (an operator's "off") is never written
    /// over with a copy read before it. The stored app, or `nil` when there is no such app.
    func update(
        _ appID: AppID, recording event: AuditEvent, _ change: @escaping @Sendable (StoredApp) throws -> AppSettings
    ) async throws -> StoredApp?
    /// Deletes the app with its keys and records `event`; `false` when there is no such app.
    func delete(_ appID: AppID, recording event: AuditEvent) async throws -> Bool
}
