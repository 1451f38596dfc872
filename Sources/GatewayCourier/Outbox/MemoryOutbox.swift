public import Foundation
public import GatewayCore
public import GatewayPluginKit

/// The outbox in memory, beside the memory code stores.
public struct MemoryOutbox: OutboxStore {
    public struct Row: Sendable {
        public var appID: AppID
        public var message: OutboxMessage
        public var state = "queued"
        public var attempts = 0
        public var nextAttemptAt = Date()
        public var leasedUntil: Date?
        public var expiresAt: Date
        public var lastReply: String?
    }

    public struct Rows: Sendable {
        public var rows: [Row] = []
        public init() {}
    }

    let table: MemoryTable<Rows>

    public init(memory: PluginMemory) {
        self.table = memory.table(of: Rows.self, empty: Rows())
    }

    func enqueue(_ message: OutboxMessage, for appID: AppID, expiresAt: Date) {
        table.change { $0.rows.append(Row(appID: appID, message: message, expiresAt: expiresAt)) }
    }

    public func queue(_ message: OutboxMessage, in appID: AppID, lifetimeSeconds: Int) async throws {
        enqueue(message, for: appID, expiresAt: Date().addingTimeInterval(TimeInterval(lifetimeSeconds)))
    }

    public func claim(channel: String, limit: Int, lease: Duration) async throws -> [ClaimedMessage] {
        let now = Date()
        return table.change { rows in
            var claimed: [ClaimedMessage] = []
            for index in rows.rows.indices where claimed.count < limit {
                let row = rows.rows[index]
                guard row.message.channel == channel, row.state == "queued", row.nextAttemptAt <= now,
                    (row.leasedUntil ?? .distantPast) <= now
                else { continue }
                rows.rows[index].attempts += 1
                rows.rows[index].leasedUntil = now.addingTimeInterval(Double(lease.components.seconds))
                claimed.append(
                    ClaimedMessage(
                        appID: row.appID, id: row.message.id, payload: row.message.payload, requestID: row.message.requestID,
                        attempt: row.attempts + 1,
                        hasExpired: row.expiresAt <= now))
            }
            return claimed
        }
    }

    public func cancel(for userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Int {
        let now = Date()
        return try table.change({ rows in
            var cancelled = 0
            for index in rows.rows.indices {
                let row = rows.rows[index]
                guard row.appID == appID, row.message.userID == userID, row.state == "queued", (row.leasedUntil ?? .distantPast) <= now
                else { continue }
                rows.rows[index].state = "failed"
                rows.rows[index].lastReply = event.event
                cancelled += 1
            }
            return cancelled
        }, recording: { $0 > 0 ? event : nil })
    }

    public func finish(_ ends: [OutboxAttemptEnd]) async throws -> [Bool] {
        var finished: [Bool] = []
        for end in ends { finished.append(try finish(end.message, end.finish, recording: end.row)) }
        return finished
    }

    private func finish(_ message: ClaimedMessage, _ finish: OutboxFinish, recording event: AuditEvent) throws -> Bool {
        try table.change({ rows in
            guard
                let index = rows.rows.firstIndex(where: {
                    $0.appID == message.appID && $0.message.id == message.id && $0.attempts == message.attempt && $0.state == "queued"
                })
            else { return false }
            rows.rows[index].leasedUntil = nil
            switch finish {
            case .delivered(let reply):
                rows.rows[index].state = "delivered"
                rows.rows[index].lastReply = reply
            case .failed(let reply):
                rows.rows[index].state = "failed"
                rows.rows[index].lastReply = reply
            case .retry(let pause, let reply):
                rows.rows[index].nextAttemptAt = Date().addingTimeInterval(Double(pause.components.seconds))
                rows.rows[index].lastReply = reply
            }
            return true
        }, recording: { $0 ? event : nil })
    }
}
