import Foundation
import GatewayCore

/// Users' second factors and sign-in tickets in memory, beside the other stores.
extension InMemoryStores {
    struct SecondFactors: SecondFactorStore {
        let memory: InMemoryStores

        private static func key(_ userID: String, _ appID: AppID) -> String { "\(appID)/\(userID)" }

        private static func counted(_ entry: (factor: StoredSecondFactor, codes: [[UInt8]: Date?])) -> StoredSecondFactor {
            let factor = entry.factor
            return StoredSecondFactor(
                appID: factor.appID, userID: factor.userID, factorID: factor.factorID, sealedSecret: factor.sealedSecret,
                createdAt: factor.createdAt, confirmedAt: factor.confirmedAt, lastStep: factor.lastStep,
                lastUsedAt: factor.lastUsedAt, recoveryCodesLeft: entry.codes.values.filter { $0 == nil }.count)
        }

        private static func changed(
            _ factor: StoredSecondFactor, confirmedAt: Date?, lastStep: Int64?, lastUsedAt: Date?
        ) -> StoredSecondFactor {
            StoredSecondFactor(
                appID: factor.appID, userID: factor.userID, factorID: factor.factorID, sealedSecret: factor.sealedSecret,
                createdAt: factor.createdAt, confirmedAt: confirmedAt, lastStep: lastStep, lastUsedAt: lastUsedAt,
                recoveryCodesLeft: 0)
        }

        private static func key(of factorID: UUID, in state: State) -> String? {
            state.factors.first { $0.value.factor.factorID == factorID }?.key
        }

        func factor(of userID: String, in appID: AppID) async throws -> StoredSecondFactor? {
            try memory.change { state in state.factors[Self.key(userID, appID)].map(Self.counted) }
        }

        func enrol(_ enrolment: SecondFactorEnrolment, recording row: AuditEvent) async throws -> Bool {
            try memory.change { state in
                let key = Self.key(enrolment.userID, enrolment.appID)
                if let existing = state.factors[key], existing.factor.isConfirmed { return false }
                let factor = StoredSecondFactor(
                    appID: enrolment.appID, userID: enrolment.userID, factorID: enrolment.factorID,
                    sealedSecret: enrolment.sealedSecret, createdAt: Date(), confirmedAt: nil, lastStep: nil, lastUsedAt: nil,
                    recoveryCodesLeft: 0)
                state.factors[key] = (factor, Dictionary(uniqueKeysWithValues: enrolment.recoveryDigests.map { ($0, nil) }))
                state.events.append(row)
                return true
            }
        }

        func confirm(_ factorID: UUID, step: Int64, recording row: AuditEvent) async throws -> Bool {
            try memory.change { state in
                guard let key = Self.key(of: factorID, in: state), let entry = state.factors[key], !entry.factor.isConfirmed
                else { return false }
                state.factors[key]!.factor = Self.changed(entry.factor, confirmedAt: Date(), lastStep: step, lastUsedAt: Date())
                state.events.append(row)
                return true
            }
        }

        func replaceRecoveryCodes(
            of factorID: UUID, step: Int64, digests: [[UInt8]], recording row: AuditEvent
        ) async throws -> Bool {
            try memory.change { state in
                guard let key = Self.key(of: factorID, in: state), let entry = state.factors[key], entry.factor.isConfirmed,
                    step > (entry.factor.lastStep ?? .min)
                else { return false }
                state.factors[key] = (
                    Self.changed(entry.factor, confirmedAt: entry.factor.confirmedAt, lastStep: step, lastUsedAt: Date()),
                    Dictionary(uniqueKeysWithValues: digests.map { ($0, nil) })
                )
                state.events.append(row)
                return true
            }
        }

        func reset(_ userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Bool {
            try memory.change { state in
                guard state.factors.removeValue(forKey: Self.key(userID, appID)) != nil else { return false }
                state.events.append(row)
                return true
            }
        }

        func forget(_ userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Bool {
            try memory.change { state in
                state.tickets = state.tickets.filter { $0.value.grant.appID != appID || $0.value.grant.userID != userID }
                guard state.factors.removeValue(forKey: Self.key(userID, appID)) != nil else { return false }
                state.events.append(row)
                return true
            }
        }

        func endTickets(of userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Int {
            try memory.change { state in
                let before = state.tickets.count
                state.tickets = state.tickets.filter { $0.value.grant.appID != appID || $0.value.grant.userID != userID }
                let ended = before - state.tickets.count
                if ended > 0 {
                    var row = row
                    row.detail["tickets"] = String(ended)
                    state.events.append(row)
                }
                return ended
            }
        }

        func issue(_ ticket: MFATicketGrant, lifetimeSeconds: Int) async throws {
            try memory.change { state in
                state.tickets[ticket.digest] = StoredMFATicket(
                    grant: ticket, expiresAt: Date().addingTimeInterval(Double(lifetimeSeconds)), spentAt: nil)
            }
        }

        func ticket(_ digest: [UInt8], in appID: AppID) async throws -> (ticket: StoredMFATicket?, now: Date) {
            try memory.change { state in
                let ticket = state.tickets[digest]
                return (ticket?.grant.appID == appID ? ticket : nil, Date())
            }
        }

        func complete(
            ticket digest: [UInt8]?, in appID: AppID, factor factorID: UUID, proof: SecondFactorProof
        ) async throws -> SecondFactorCompletion {
            try memory.change { state in
                let now = Date()
                var ticket: StoredMFATicket?
                if let digest {
                    guard let found = state.tickets[digest], found.grant.appID == appID, found.spentAt == nil,
                        found.expiresAt > now
                    else { return .ticketSpent }
                    ticket = found
                }
                guard let key = Self.key(of: factorID, in: state), let entry = state.factors[key] else { return .proofSpent }
                switch proof {
                case .totp(let step):
                    guard step > (entry.factor.lastStep ?? .min) else { return .proofSpent }
                    state.factors[key]!.factor = Self.changed(
                        entry.factor, confirmedAt: entry.factor.confirmedAt ?? now, lastStep: step, lastUsedAt: now)
                case .recoveryCode(let code):
                    guard entry.factor.isConfirmed, let used = entry.codes[code], used == nil else { return .proofSpent }
                    state.factors[key]!.codes[code] = now
                    state.factors[key]!.factor = Self.changed(
                        entry.factor, confirmedAt: entry.factor.confirmedAt, lastStep: entry.factor.lastStep, lastUsedAt: now)
                }
                if let digest, let ticket {
                    state.tickets[digest] = StoredMFATicket(grant: ticket.grant, expiresAt: ticket.expiresAt, spentAt: now)
                }
                return .completed
            }
        }
    }
}
