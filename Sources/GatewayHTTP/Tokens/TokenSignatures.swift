import CoreMetrics
import GatewayCore
import Synchronization
import Tracing

/// A request's token signatures, which may begin while its row's statement
/// runs and are handed out only once that statement has committed.
///
/// A signature is most of a token's CPU, and the group commit is most of its
/// wait: made one after the other, a closed loop of 32 clients left the cores
/// a tenth idle (docs/performance.md, "The ledger at 32 connections"). So
/// where every limit that counts requests (`app`, `ip`, ...) has allowed
/// this one from the replica's blocks before its statement is sent
/// (``start()``, called through `RequestLimits.admit(…onCountsAllowed:)`),
/// the signing threads sign beside the statement. Nowhere else: a request
/// such a limit may refuse is signed only after its row is written, so
/// signatures never outnumber the requests those limits let through, and a
/// flood past them costs none. Either way ``tokens()`` is asked for only
/// once the row is committed: no token leaves without its row. A signature
/// made for a row that was then not written (the statement failed, a
/// rotation lost its race, or the user was over their failures: a verified
/// credential of a locked-out user) is dropped by ``discard()`` and counted
/// in `gateway_token_signatures_discarded_total`.
final class TokenSignatures: Sendable {
    private let sign: @Sendable () async throws -> [String]
    /// The signing begun beside the statement, if it was.
    private let begun = Mutex<Task<[String], any Error>?>(nil)

    /// `grants`' tokens from `minter`, on `signers`; `profile` names the
    /// signature's span.
    init(_ grants: [TokenGrant], minter: any TokenMinter, profile: String, signers: SigningThreads) {
        sign = {
            try await signers.run("token signature", attributes: ["gateway.token_profile": .string(profile)]) {
                try grants.map { try minter.mint($0) }
            }
        }
    }

    /// Begins the signatures beside the row's statement (once).
    func start() {
        begun.withLock { begun in
            if begun == nil { begun = Task { try await sign() } }
        }
    }

    /// The tokens, in the grants' order: those begun beside the row, or
    /// signed now. Ask only once the row is committed.
    func tokens() async throws -> [String] {
        if let task = begun.withLock({ $0 }) { return try await task.value }
        return try await sign()
    }

    /// Drops what was begun for a row that was not written: nobody will ask for it.
    func discard() {
        guard begun.withLock({ $0 }) != nil else { return }
        Self.discarded.increment()
    }

    private static let discarded = Counter(label: "gateway_token_signatures_discarded_total")
}
