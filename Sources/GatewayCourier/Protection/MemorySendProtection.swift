public import Foundation
public import GatewayCore
public import GatewayPluginKit

/// Send protection's state in memory, for tests of the routes' logic; its SQL
/// (``PostgresSendProtection``) is tested against PostgreSQL.
public struct MemorySendProtection: SendProtectionStore {
    struct Key: Hashable {
        let appID: AppID
        let channel: String
        let prefix: String
    }

    struct Rows: Sendable {
        var trips: [Key: BreakerTrip] = [:]
        var tokens: [AppID: [[UInt8]: Date]] = [:]
    }

    let table: MemoryTable<Rows>

    public init(memory: PluginMemory) {
        table = memory.table(of: Rows.self, empty: Rows())
    }

    public func openTrip(of prefix: String, channel: String, in appID: AppID, now: Date) async throws -> BreakerTrip? {
        table.change { rows in rows.trips[Key(appID: appID, channel: channel, prefix: prefix)].flatMap { $0.isOpen(at: now) ? $0 : nil } }
    }

    public func trip(
        _ prefix: String, channel: String, in appID: AppID, threshold: Int, until: Date, grace: Int, now: Date,
        recording event: AuditEvent
    ) async throws -> TripOutcome {
        let key = Key(appID: appID, channel: channel, prefix: prefix)
        return try table.change({ rows in
            if let stored = rows.trips[key] {
                if stored.isOpen(at: now) { return TripOutcome.alreadyOpen }
                if let released = stored.releasedAt, released.addingTimeInterval(Double(grace)) > now { return .released }
            }
            rows.trips[key] = BreakerTrip(channel: channel, prefix: prefix, trippedAt: now, openUntil: until, threshold: threshold)
            return .tripped
        }, recording: { $0 == .tripped ? event : nil })
    }

    public func release(
        _ prefix: String, channel: String, in appID: AppID, by actor: String, now: Date, recording event: AuditEvent
    ) async throws -> Bool {
        let key = Key(appID: appID, channel: channel, prefix: prefix)
        return try table.change({ rows in
            guard let stored = rows.trips[key], stored.isOpen(at: now) else { return false }
            rows.trips[key] = BreakerTrip(
                channel: channel, prefix: prefix, trippedAt: stored.trippedAt, openUntil: now, threshold: stored.threshold,
                releasedAt: now, releasedBy: actor)
            return true
        }, recording: { $0 ? event : nil })
    }

    public func trips(in appID: AppID) async throws -> [BreakerTrip] {
        table.change { rows in rows.trips.filter { $0.key.appID == appID }.map(\.value).sorted { $0.trippedAt > $1.trippedAt } }
    }

    public func claimToken(_ hash: [UInt8], in appID: AppID, until expiresAt: Date) async throws -> Bool {
        table.change { rows in
            let now = Date()
            rows.tokens[appID, default: [:]] = rows.tokens[appID, default: [:]].filter { $0.value > now }
            guard rows.tokens[appID]?[hash] == nil else { return false }
            rows.tokens[appID]?[hash] = expiresAt
            return true
        }
    }
}
