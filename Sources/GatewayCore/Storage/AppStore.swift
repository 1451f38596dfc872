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
    /// Replaces the app's settings and records `event`; `false` when there is no such app.
    func update(_ app: AppSettings, recording event: AuditEvent) async throws -> Bool
    /// Deletes the app with its keys and records `event`; `false` when there is no such app.
    func delete(_ appID: AppID, recording event: AuditEvent) async throws -> Bool
}
