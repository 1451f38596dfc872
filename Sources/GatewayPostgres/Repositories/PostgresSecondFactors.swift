public import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `second_factors`, `recovery_codes` and `mfa_tickets` tables
/// (``GatewayCore/SecondFactorStore``). Whatever spends a ticket, a time
/// step or a recovery code is a conditional `UPDATE`: the row decides
/// between two replicas, never a read before it.
public struct PostgresSecondFactors: SecondFactorStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func factor(of userID: String, in appID: AppID) async throws -> StoredSecondFactor? {
        let rows = try await client.tracedQuery(
            """
            SELECT f.factor_id, f.totp_sealed, f.created_at, f.confirmed_at, f.last_step, f.last_used_at,
                   (SELECT count(*)::int8 FROM recovery_codes c WHERE c.factor_id = f.factor_id AND c.used_at IS NULL)
            FROM second_factors f WHERE f.app_id = \(appID.uuid) AND f.user_id = \(userID)
            """, logger: logger)
        for (factorID, sealed, created, confirmed, lastStep, lastUsed, left) in try rows.decode(
            (UUID, ByteBuffer, Date, Date?, Int64?, Date?, Int64).self)
        {
            return StoredSecondFactor(
                appID: appID, userID: userID, factorID: factorID, sealedSecret: Array(sealed.readableBytesView),
                createdAt: created, confirmedAt: confirmed, lastStep: lastStep, lastUsedAt: lastUsed,
                recoveryCodesLeft: Int(left))
        }
        return nil
    }

    public func enrol(_ enrolment: SecondFactorEnrolment, recording row: AuditEvent) async throws -> Bool {
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run(recording: row, when: { $0 }) { connection in
            // A confirmed factor stays; an unconfirmed one (and its codes) makes way.
            let rows = try await connection.tracedQuery(
                """
                WITH cleared AS (
                    DELETE FROM second_factors
                    WHERE app_id = \(enrolment.appID.uuid) AND user_id = \(enrolment.userID) AND confirmed_at IS NULL
                ),
                confirmed AS (
                    SELECT 1 FROM second_factors
                    WHERE app_id = \(enrolment.appID.uuid) AND user_id = \(enrolment.userID) AND confirmed_at IS NOT NULL
                )
                SELECT NOT EXISTS (SELECT 1 FROM confirmed)
                """, logger: logger)
            var free = false
            for value in try rows.decode(Bool.self) { free = value }
            guard free else { return false }
            try await connection.tracedQuery(
                """
                INSERT INTO second_factors (app_id, user_id, factor_id, totp_sealed, created_at)
                VALUES (\(enrolment.appID.uuid), \(enrolment.userID), \(enrolment.factorID),
                        \(ByteBuffer(bytes: enrolment.sealedSecret)), now())
                """, logger: logger)
            try await Self.insertCodes(enrolment.recoveryDigests, of: enrolment.factorID, on: connection, logger: logger)
            return true
        }
    }

    public func confirm(_ factorID: UUID, step: Int64, recording row: AuditEvent) async throws -> Bool {
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run(recording: row, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                UPDATE second_factors SET confirmed_at = now(), last_step = \(step), last_used_at = now()
                WHERE factor_id = \(factorID) AND confirmed_at IS NULL
                RETURNING 1
                """, logger: logger)
            return rows.count == 1
        }
    }

    public func replaceRecoveryCodes(
        of factorID: UUID, step: Int64, digests: [[UInt8]], recording row: AuditEvent
    ) async throws -> Bool {
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run(recording: row, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                UPDATE second_factors SET last_step = \(step), last_used_at = now()
                WHERE factor_id = \(factorID) AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < \(step))
                RETURNING 1
                """, logger: logger)
            guard rows.count == 1 else { return false }
            try await connection.tracedQuery("DELETE FROM recovery_codes WHERE factor_id = \(factorID)", logger: logger)
            try await Self.insertCodes(digests, of: factorID, on: connection, logger: logger)
            return true
        }
    }

    public func reset(_ userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Bool {
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run(recording: row, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                "DELETE FROM second_factors WHERE app_id = \(appID.uuid) AND user_id = \(userID) RETURNING 1", logger: logger)
            return rows.count == 1
        }
    }

    public func forget(_ userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Bool {
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run(recording: row, when: { $0 }) { connection in
            _ = try await connection.tracedQuery(
                "DELETE FROM mfa_tickets WHERE app_id = \(appID.uuid) AND user_id = \(userID)", logger: logger
            )
            let rows = try await connection.tracedQuery(
                "DELETE FROM second_factors WHERE app_id = \(appID.uuid) AND user_id = \(userID) RETURNING 1", logger: logger)
            return rows.count == 1
        }
    }

    public func endTickets(of userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Int {
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run({ connection in
            try await connection.tracedQuery(
                "DELETE FROM mfa_tickets WHERE app_id = \(appID.uuid) AND user_id = \(userID) RETURNING 1", logger: logger
            ).count
        }, recording: { ended in
            guard ended > 0 else { return nil }
            var row = row
            row.detail["tickets"] = String(ended)
            return row
        })
    }

    public func issue(_ ticket: MFATicketGrant, lifetimeSeconds: Int) async throws {
        try await client.committedQuery(
            """
            INSERT INTO mfa_tickets (ticket_sha256, app_id, user_id, nonce, credential_type, methods, profile, device_label,
                                     created_at, expires_at)
            VALUES (\(ByteBuffer(bytes: ticket.digest)), \(ticket.appID.uuid), \(ticket.userID), \(ticket.nonce),
                    \(ticket.credentialType), \(ticket.methods), \(ProfileJSON.text(ticket.profile))::jsonb, \(ticket.deviceLabel),
                    now(), now() + \(Int64(lifetimeSeconds)) * interval '1 second')
            """, logger: logger)
    }

    public func ticket(_ digest: [UInt8], in appID: AppID) async throws -> (ticket: StoredMFATicket?, now: Date) {
        let rows = try await client.tracedQuery(
            """
            SELECT now(), t.user_id, t.nonce, t.credential_type, t.methods, t.profile::text, t.device_label, t.expires_at,
                   t.spent_at
            FROM (SELECT now()) AS clock
            LEFT JOIN mfa_tickets t ON t.ticket_sha256 = \(ByteBuffer(bytes: digest)) AND t.app_id = \(appID.uuid)
            """, logger: logger)
        for row in rows {
            let columns = row.makeRandomAccess()
            let now = try columns[0].decode(Date.self)
            guard let userID = try columns[1].decode(String?.self) else { return (nil, now) }
            let grant = MFATicketGrant(
                digest: digest, appID: appID, userID: userID, nonce: try columns[2].decode(String.self),
                credentialType: try columns[3].decode(String.self), methods: try columns[4].decode([String].self),
                profile: try ProfileJSON.profile(try columns[5].decode(String.self)),
                deviceLabel: try columns[6].decode(String?.self))
            return (
                StoredMFATicket(grant: grant, expiresAt: try columns[7].decode(Date.self), spentAt: try columns[8].decode(Date?.self)),
                now
            )
        }
        throw UnreadableRow("the ticket lookup answered no row")
    }

    public func complete(
        ticket digest: [UInt8]?, in appID: AppID, factor factorID: UUID, proof: SecondFactorProof
    ) async throws -> SecondFactorCompletion {
        let logger = logger
        do {
            return try await client.transaction(logger: logger) { connection in
                if let digest {
                    let spent = try await connection.tracedQuery(
                        """
                        UPDATE mfa_tickets SET spent_at = now()
                        WHERE ticket_sha256 = \(ByteBuffer(bytes: digest)) AND app_id = \(appID.uuid)
                          AND spent_at IS NULL AND expires_at > now()
                        RETURNING 1
                        """, logger: logger)
                    guard spent.count == 1 else { return .ticketSpent }
                }
                let proven: [PostgresRow]
                switch proof {
                case .totp(let step):
                    proven = try await connection.tracedQuery(
                        """
                        UPDATE second_factors
                        SET last_step = \(step), last_used_at = now(), confirmed_at = coalesce(confirmed_at, now())
                        WHERE factor_id = \(factorID) AND (last_step IS NULL OR last_step < \(step))
                        RETURNING 1
                        """, logger: logger)
                case .recoveryCode(let code):
                    proven = try await connection.tracedQuery(
                        """
                        WITH used AS (
                            UPDATE recovery_codes SET used_at = now()
                            WHERE factor_id = \(factorID) AND code_sha256 = \(ByteBuffer(bytes: code)) AND used_at IS NULL
                              AND EXISTS (SELECT 1 FROM second_factors f
                                          WHERE f.factor_id = \(factorID) AND f.confirmed_at IS NOT NULL)
                            RETURNING 1
                        )
                        UPDATE second_factors SET last_used_at = now()
                        WHERE factor_id = \(factorID) AND EXISTS (SELECT 1 FROM used)
                        RETURNING 1
                        """, logger: logger)
                }
                // The ticket's spending goes back with the transaction: it stays good for a right code.
                guard proven.count == 1 else { throw ProofSpent() }
                return .completed
            }
        } catch let error as TransactionError where error.closureError is ProofSpent {
            return .proofSpent
        }
    }

    private struct ProofSpent: Error {}

    private static func insertCodes(
        _ digests: [[UInt8]], of factorID: UUID, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.tracedQuery(
            """
            INSERT INTO recovery_codes (factor_id, code_sha256)
            SELECT \(factorID), code FROM unnest(\(digests.map { ByteBuffer(bytes: $0) })::bytea[]) AS code
            """, logger: logger)
    }
}
