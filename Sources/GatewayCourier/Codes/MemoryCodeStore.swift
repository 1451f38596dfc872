public import Foundation
public import GatewayCore
public import GatewayPluginKit

/// A channel's codes in memory, for tests of a plugin's logic; the SQL
/// (``PostgresCodeStore``) is tested against PostgreSQL. Queued messages go
/// to the memory outbox (``MemoryOutbox``).
public struct MemoryCodeStore<Table: CodeTable>: CodeStore {
    public typealias Address = Table.Address

    public struct Code: Sendable {
        public var mac: [UInt8]
        public var attemptsLeft: Int
        public var sentAt: Date
        public var expiresAt: Date
    }

    /// The table's rows: one live code per app and address text.
    public struct Rows: Sendable {
        public var codes: [AppID: [String: Code]] = [:]
        public init() {}
    }

    let table: MemoryTable<Rows>
    let outbox: MemoryOutbox

    public init(memory: PluginMemory) {
        self.table = memory.table(of: Rows.self, empty: Rows())
        self.outbox = MemoryOutbox(memory: memory)
    }

    public func storeUnlessTooSoon(
        code mac: [UInt8], for address: Address, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int, queueing message: OutboxMessage?
    ) async throws -> Int? {
        let now = Date()
        return table.change { rows in
            if let live = rows.codes[appID]?[address.text], live.expiresAt > now {
                let wait = live.sentAt.addingTimeInterval(TimeInterval(resendAfterSeconds)).timeIntervalSince(now)
                if wait > 0 { return max(1, Int(wait.rounded(.up))) }
            }
            let expiresAt = now.addingTimeInterval(TimeInterval(lifetimeSeconds))
            rows.codes[appID, default: [:]][address.text] = Code(
                mac: mac, attemptsLeft: attempts, sentAt: now, expiresAt: expiresAt)
            if let message { outbox.enqueue(message, for: appID, expiresAt: expiresAt) }
            return nil
        }
    }

    @discardableResult
    public func discardCode(for address: Address, in appID: AppID) async throws -> Bool {
        table.change { $0.codes[appID]?.removeValue(forKey: address.text) != nil }
    }

    public func check(_ mac: [UInt8], for address: Address, in appID: AppID, keepingOnMatch: Bool) async throws -> CodeCheck {
        let now = Date()
        return table.change { rows in
            guard let code = rows.codes[appID]?[address.text] else { return .noCode }
            let verdict: CodeCheck =
                code.expiresAt <= now || code.attemptsLeft <= 0
                ? .noCode : ConstantTime.equals(code.mac, mac) ? .accepted : .wrong(attemptsLeft: code.attemptsLeft - 1)
            if case .wrong(let left) = verdict, left > 0 {
                rows.codes[appID]?[address.text]?.attemptsLeft = left
            } else if verdict == .accepted, keepingOnMatch {
                // Left live for the check that spends it.
            } else {
                rows.codes[appID]?[address.text] = nil
            }
            return verdict
        }
    }
}
