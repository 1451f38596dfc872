import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The middle step of a master-key rotation: re-seals every app's private key
/// that is still under the previous master key with the current one, in one
/// transaction with its audit row. Keys already under the current key are
/// left alone, so running it again changes nothing. A key that opens under
/// neither stops the run before anything is written.
public struct KeyResealer: Sendable {
    public struct Report: Sendable, Equatable {
        public var resealed = 0
        public var alreadyCurrent = 0
    }

    public struct UnopenableKeys: Error, CustomStringConvertible {
        public let keys: [String]
        public var description: String {
            "\(keys.count) key(s) open under neither master_key nor master_key_previous; nothing was changed: "
                + keys.joined(separator: ", ")
        }
    }

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// - Parameter masterKey: the new master key holding the old one as its previous key.
    public func run(masterKey: MasterKey) async throws -> Report {
        let keys = AppKeyRepository(client: client, logger: logger)
        let transactions = AuditedTransaction(client: client, logger: logger)
        do {
            return try await reseal(with: masterKey, keys: keys, transactions: transactions)
        } catch let error as TransactionError {
            throw error.closureError ?? error
        }
    }

    private func reseal(
        with masterKey: MasterKey, keys: AppKeyRepository, transactions: AuditedTransaction
    ) async throws -> Report {
        try await transactions.run({ connection in
            var report = Report()
            var unopenable: [String] = []
            for (appID, keyID, sealed) in try await keys.lockSealedKeys(on: connection) {
                let context = StoredKey.sealingContext(appID: appID, keyID: keyID)
                if masterKey.opensWithCurrentKey(sealed, context: context) {
                    report.alreadyCurrent += 1
                    continue
                }
                guard let plaintext = try? masterKey.open(sealed, context: context) else {
                    unopenable.append("app \(appID) key \(keyID.uuid.lowercasedText)")
                    continue
                }
                try await keys.replaceSealedKey(
                    try masterKey.seal(plaintext, context: context), of: keyID, of: appID, on: connection)
                report.resealed += 1
            }
            guard unopenable.isEmpty else { throw UnopenableKeys(keys: unopenable) }
            return report
        }, recording: { report in
            AuditEvent(
                appID: nil, event: "admin.keys.resealed", outcome: .success, requestID: "reseal-keys-\(UUID().lowercasedText)",
                detail: ["resealed": "\(report.resealed)", "already_current": "\(report.alreadyCurrent)"])
        })
    }
}
