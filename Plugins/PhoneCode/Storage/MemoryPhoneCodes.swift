import Foundation
import GatewayCore
import GatewayPluginKit

/// The codes and numbers in memory, for tests of the plugin's logic; its
/// SQL (``PostgresPhoneCodes``) is tested against PostgreSQL.
struct MemoryPhoneCodes: PhoneCodeStore {
    struct Code: Sendable {
        var mac: [UInt8]
        var attemptsLeft: Int
        var sentAt: Date
        var expiresAt: Date
    }

    struct Rows: Sendable {
        var codes: [AppID: [String: Code]] = [:]
        var numbers: [AppID: [String: PhoneNumberBinding]] = [:]
    }

    let table: MemoryTable<Rows>

    func storeUnlessTooSoon(
        code mac: [UInt8], for number: PhoneNumber, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int
    ) async throws -> Int? {
        let now = Date()
        return table.change { rows in
            if let live = rows.codes[appID]?[number.text], live.expiresAt > now {
                let wait = live.sentAt.addingTimeInterval(TimeInterval(resendAfterSeconds)).timeIntervalSince(now)
                if wait > 0 { return max(1, Int(wait.rounded(.up))) }
            }
            rows.codes[appID, default: [:]][number.text] = Code(
                mac: mac, attemptsLeft: attempts, sentAt: now,
                expiresAt: now.addingTimeInterval(TimeInterval(lifetimeSeconds)))
            return nil
        }
    }

    func discardCode(for number: PhoneNumber, in appID: AppID) async throws {
        table.change { _ = $0.codes[appID]?.removeValue(forKey: number.text) }
    }

    func check(_ mac: [UInt8], for number: PhoneNumber, in appID: AppID) async throws -> PhoneCodeCheck {
        let now = Date()
        return table.change { rows in
            guard let code = rows.codes[appID]?[number.text] else { return .noCode }
            guard code.expiresAt > now, code.attemptsLeft > 0 else {
                rows.codes[appID]?[number.text] = nil
                return .noCode
            }
            if ConstantTime.equals(code.mac, mac) {
                rows.codes[appID]?[number.text] = nil
                return .accepted
            }
            let left = code.attemptsLeft - 1
            rows.codes[appID]?[number.text]?.attemptsLeft = left
            if left == 0 { rows.codes[appID]?[number.text] = nil }
            return .wrong(attemptsLeft: left)
        }
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
