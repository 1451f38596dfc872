import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The TOTP secrets' part of a master-key rotation (`reseal-keys`):
/// re-seals every factor's secret still under the previous master key with
/// the current one, a page of factors a transaction with its
/// `admin.second_factors.resealed` row. A secret that opens under neither
/// key is left as it is and counted: its user's codes stop working until an
/// admin resets the factor.
public struct SecondFactorResealer: Sendable {
    public struct Report: Sendable, Equatable {
        public var resealed = 0
        public var unopenable = 0
    }

    static let pageSize = 500

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func run(masterKey: MasterKey) async throws -> Report {
        var report = Report()
        var after = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let transactions = AuditedTransaction(client: client, logger: logger)
        let logger = logger
        while true {
            let cursor = after
            let page = try await transactions.run(
                { connection -> (Report, UUID?, Int) in
                    var page = Report()
                    var last: UUID?
                    var seen = 0
                    let rows = try await connection.tracedQuery(
                        """
                        SELECT factor_id, app_id, user_id, totp_sealed FROM second_factors
                        WHERE factor_id > \(cursor) ORDER BY factor_id LIMIT \(Self.pageSize) FOR UPDATE
                        """, logger: logger)
                    var changes: [(UUID, ByteBuffer)] = []
                    for (factorID, appID, userID, sealed) in try rows.decode((UUID, UUID, String, ByteBuffer).self) {
                        seen += 1
                        last = factorID
                        let bytes = Array(sealed.readableBytesView)
                        let context = TOTPSecret.sealingContext(userID, AppID(uuid: appID))
                        if masterKey.opensWithCurrentKey(bytes, context: context) { continue }
                        guard let plain = try? masterKey.open(bytes, context: context) else {
                            page.unopenable += 1
                            continue
                        }
                        changes.append((factorID, ByteBuffer(bytes: try masterKey.seal(plain, context: context))))
                    }
                    for (factorID, sealed) in changes {
                        try await connection.tracedQuery(
                            "UPDATE second_factors SET totp_sealed = \(sealed) WHERE factor_id = \(factorID)", logger: logger)
                    }
                    page.resealed = changes.count
                    return (page, last, seen)
                },
                recording: { result in
                    guard result.0.resealed > 0 else { return nil }
                    return AuditEvent(
                        appID: nil, event: "admin.second_factors.resealed", outcome: .success,
                        requestID: "reseal-keys-\(UUID().lowercasedText)", detail: ["resealed": "\(result.0.resealed)"])
                })
            report.resealed += page.0.resealed
            report.unopenable += page.0.unopenable
            guard page.2 == Self.pageSize, let last = page.1 else { return report }
            after = last
        }
    }
}
