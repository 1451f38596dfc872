public import Foundation

/// The admin tokens. Every change commits together with its audit row, or
/// neither does.
public protocol AdminTokenStore: Sendable {
    /// The live token with this secret (not revoked, not expired), marked as
    /// used; `nil` when there is none.
    func authenticate(_ secret: AdminTokenSecret) async throws -> AdminTokenRecord?
    /// Tokens in id order after `cursor`.
    func list(after cursor: UUID?, limit: Int) async throws -> [AdminTokenRecord]
    /// Stores the token (its secret only as a digest) and records `event`.
    func create(_ record: AdminTokenRecord, secret: AdminTokenSecret, recording event: AuditEvent) async throws
    /// Revokes a live token and records `event`; `false` when there is none with that id.
    func revoke(_ id: UUID, recording event: AuditEvent) async throws -> Bool
}
