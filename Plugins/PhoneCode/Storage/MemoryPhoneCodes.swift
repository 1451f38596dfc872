import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit

/// The numbers in memory (the codes in the courier's ``MemoryCodeStore``), for tests of the plugin's logic; its
/// SQL (``PostgresPhoneCodes``) is tested against PostgreSQL.
struct MemoryPhoneCodes: PhoneCodeStore {
    struct Rows: Sendable {
        var numbers: [AppID: [String: PhoneNumberBinding]] = [:]
    }

    let table: MemoryTable<Rows>
    private let codes: MemoryCodeStore<PhoneCodeTable>

    init(memory: PluginMemory) {
        self.table = memory.table(of: Rows.self, empty: Rows())
        self.codes = MemoryCodeStore(memory: memory)
    }

    func storeUnlessTooSoon(
        code mac: [UInt8], for number: PhoneNumber, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int, queueing message: OutboxMessage?
    ) async throws -> Int? {
        try await codes.storeUnlessTooSoon(
            code: mac, for: number, in: appID, attempts: attempts, lifetimeSeconds: lifetimeSeconds,
            resendAfterSeconds: resendAfterSeconds, queueing: message)
    }

    @discardableResult
    func discardCode(for number: PhoneNumber, in appID: AppID) async throws -> Bool {
        try await codes.discardCode(for: number, in: appID)
    }

    func check(_ mac: [UInt8], for number: PhoneNumber, in appID: AppID, keepingOnMatch: Bool) async throws -> CodeCheck {
        try await codes.check(mac, for: number, in: appID, keepingOnMatch: keepingOnMatch)
    }

    func binding(of number: PhoneNumber, in appID: AppID) async throws -> PhoneNumberBinding? {
        table.change { $0.numbers[appID]?[number.text] }
    }

    func bindings(in appID: AppID, after: String?, limit: Int) async throws -> [PhoneNumberBinding] {
        let after = after ?? ""
        return table.change { rows in
            (rows.numbers[appID] ?? [:]).values.filter { $0.phoneNumber > after }
                .sorted { $0.phoneNumber < $1.phoneNumber }.prefix(limit).map { $0 }
        }
    }

    func bind(
        _ number: PhoneNumber, to identity: VerifiedIdentity, in appID: AppID,
        recording describe: @escaping @Sendable (Bool) -> AuditEvent
    ) async throws -> Bool {
        let now = Date()
        return try table.change({ rows in
            let old = rows.numbers[appID]?[number.text]
            rows.numbers[appID, default: [:]][number.text] = PhoneNumberBinding(
                phoneNumber: number.text, identity: identity, createdAt: old?.createdAt ?? now, updatedAt: now)
            return old == nil
        }, recording: describe)
    }

    func bindings(of userID: String, in appID: AppID) async throws -> [PhoneNumberBinding] {
        table.change { rows in
            (rows.numbers[appID] ?? [:]).values.filter { $0.identity.userID == userID }.sorted { $0.phoneNumber < $1.phoneNumber }
        }
    }

    func unbind(_ number: PhoneNumber, in appID: AppID, boundTo userID: String?, recording event: AuditEvent) async throws -> Bool {
        try table.change({ rows in
            guard let bound = rows.numbers[appID]?[number.text], userID == nil || bound.identity.userID == userID else {
                return false
            }
            rows.numbers[appID]?.removeValue(forKey: number.text)
            return true
        }, recording: { $0 ? event : nil })
    }
}
