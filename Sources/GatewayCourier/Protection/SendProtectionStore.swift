public import Foundation
public import GatewayCore
public import GatewayPluginKit
import GatewayPluginPostgres

/// A tripped pumping breaker: sends to `prefix` on `channel` are refused until `openUntil`.
public struct BreakerTrip: Sendable, Equatable {
    public let channel: String
    public let prefix: String
    public let trippedAt: Date
    public let openUntil: Date
    /// The sends the window allowed when it tripped.
    public let threshold: Int
    public let releasedAt: Date?
    public let releasedBy: String?

    public init(
        channel: String, prefix: String, trippedAt: Date, openUntil: Date, threshold: Int, releasedAt: Date? = nil,
        releasedBy: String? = nil
    ) {
        self.channel = channel
        self.prefix = prefix
        self.trippedAt = trippedAt
        self.openUntil = openUntil
        self.threshold = threshold
        self.releasedAt = releasedAt
        self.releasedBy = releasedBy
    }

    /// Whether sends to the prefix are refused at `now`.
    public func isOpen(at now: Date) -> Bool { openUntil > now }
}

/// What a breaker's trip found.
public enum TripOutcome: Sendable, Equatable {
    /// This send tripped it: the first refusal, audited.
    case tripped
    /// It was open already (another replica tripped it a moment ago).
    case alreadyOpen
    /// An operator released it less than `grace` ago: the send goes out.
    case released
}

/// Where send protection keeps its state: the breakers and the human-check
/// tokens used. The counts themselves are rate-limit counters
/// (``RouteServices/tally(_:)``).
public protocol SendProtectionStore: Sendable {
    /// `prefix`'s breaker on `channel` if it is open at `now`.
    func openTrip(of prefix: String, channel: String, in appID: AppID, now: Date) async throws -> BreakerTrip?

    /// Opens the breaker of `prefix` until `until`, recording `event` with it,
    /// unless it is open already or an operator released it within `grace`
    /// seconds (then nothing is written).
    func trip(
        _ prefix: String, channel: String, in appID: AppID, threshold: Int, until: Date, grace: Int, now: Date,
        recording event: AuditEvent
    ) async throws -> TripOutcome

    /// Closes an open breaker, recording `event` with it; false when none was open.
    func release(_ prefix: String, channel: String, in appID: AppID, by actor: String, now: Date, recording event: AuditEvent)
        async throws -> Bool

    /// The app's breakers, newest trip first (open or not): what the admin API and the console show.
    func trips(in appID: AppID) async throws -> [BreakerTrip]

    /// Claims a human-check token (its SHA-256) for one send until
    /// `expiresAt`; false when it was used before.
    func claimToken(_ hash: [UInt8], in appID: AppID, until expiresAt: Date) async throws -> Bool
}

extension PluginServices {
    /// Send protection's state where this gateway keeps its plugins' tables.
    public var sendProtection: any SendProtectionStore {
        switch storage {
        case .database(let database): PostgresSendProtection(client: database.postgres, logger: logger)
        case .memory(let memory): MemorySendProtection(memory: memory)
        }
    }
}
