import Crypto
import Foundation
import GatewayCore
import GatewayCourier
import GatewayOutbound
import GatewayPluginKit
import Logging

/// Revoking a deleted user's Sign in with Apple grants at Apple, through
/// the outbox (channel `apple_revocation`): the deletion queues one message
/// a grant and forgets the grant, and a worker on every replica posts it to
/// the provider's `revoke_url`, tried again while Apple answers 5xx or not
/// at all, for up to a week. A deletion never waits on Apple, and a
/// revocation is lost neither to a replica's restart nor to Apple's outage.
/// Each attempt's end is an `id_token.apple_revoked`,
/// `id_token.apple_revocation_retrying` or `id_token.apple_revocation_failed` row.
struct AppleRevocations: Sendable {
    static let channel = "apple_revocation"
    static let lifetimeSeconds = 7 * 86_400

    let grantKey: SymmetricKey
    let outbound: OutboundHTTP

    /// What a queued revocation carries: the provider, the user and the
    /// grant as it was kept (sealed under the grant key already).
    struct Payload: Sendable, Equatable {
        let provider: String
        let userID: String
        let sealedRefreshToken: [UInt8]

        struct Unreadable: Error {}

        var bytes: [UInt8] {
            var out: [UInt8] = [1, UInt8(provider.utf8.count)] + Array(provider.utf8)
            withUnsafeBytes(of: UInt16(userID.utf8.count).bigEndian) { out += $0 }
            return out + Array(userID.utf8) + sealedRefreshToken
        }

        init(provider: String, userID: String, sealedRefreshToken: [UInt8]) {
            self.provider = provider
            self.userID = userID
            self.sealedRefreshToken = sealedRefreshToken
        }

        init(_ bytes: [UInt8]) throws {
            guard bytes.count >= 4, bytes[0] == 1 else { throw Unreadable() }
            let providerEnd = 2 + Int(bytes[1])
            guard providerEnd + 2 <= bytes.count else { throw Unreadable() }
            let userEnd = providerEnd + 2 + (Int(bytes[providerEnd]) << 8 | Int(bytes[providerEnd + 1]))
            guard userEnd <= bytes.count else { throw Unreadable() }
            provider = String(decoding: bytes[2..<providerEnd], as: UTF8.self)
            userID = String(decoding: bytes[(providerEnd + 2)..<userEnd], as: UTF8.self)
            sealedRefreshToken = Array(bytes[userEnd...])
        }
    }

    /// Queues the revocation of each grant of the deleted user, then
    /// forgets the grants (`id_token.apple_revocation_queued` rows); how
    /// many. Queued with no user, so the user's deletion, which gives up
    /// their queued messages, leaves these be. Heard again (a deletion
    /// sent twice), it finds no grant left.
    func queue(for change: UserChange, services: PluginServices) async throws -> Int {
        guard change.kind == .deleted else { return 0 }
        let grants = try await services.appleGrants.grants(of: change.userID, in: change.appID)
        guard !grants.isEmpty else { return 0 }
        for grant in grants {
            let payload = Payload(provider: grant.provider, userID: change.userID, sealedRefreshToken: grant.sealedRefreshToken)
            let message = OutboxMessage(channel: Self.channel, payload: payload.bytes, requestID: change.requestID)
            try await services.outbox.queue(message, in: change.appID, lifetimeSeconds: Self.lifetimeSeconds)
            try await services.record(
                change.row(
                    "id_token.apple_revocation_queued", credentialType: IDTokenPlugin.type,
                    detail: ["provider": grant.provider, "message_id": message.id.uuidString.lowercased()]))
        }
        return try await services.appleGrants.forget(grants.map(\.provider), of: change.userID, in: change.appID)
    }

    /// Posts one queued revocation to Apple with the app's provider settings as they are now.
    func deliver(_ message: ClaimedMessage, tenants: any TenantLookup, logger: Logger) async -> DeliveryResult {
        guard let payload = try? Payload(message.payload) else { return .permanent(reply: "the queued revocation cannot be read") }
        let apple: AppleAPI
        do {
            let tenant = try await tenants.tenant(for: message.appID, within: .seconds(5))
            guard let verifier = try tenant.verifier(for: IDTokenPlugin.type) as? IDTokenVerifier,
                let found = verifier.options.providers.first(where: { $0.name == payload.provider })?.apple
            else { return .permanent(reply: "the app's provider '\(payload.provider)' has no apple_api any more") }
            apple = found
        } catch {
            return .unreadableSettings(error, of: "id_token")
        }
        let grant = AppleGrant(provider: payload.provider, sealedRefreshToken: payload.sealedRefreshToken)
        guard let refreshToken = try? grant.refreshToken(with: grantKey, app: message.appID, user: payload.userID) else {
            return .permanent(reply: "the grant cannot be opened (another master key?)")
        }
        do {
            try await apple.revoke(refreshToken, outbound: outbound, for: message.appID.uuid.lowercasedText, logger: logger)
            return .delivered(reply: "revoked")
        } catch {
            logger.warning(
                "Apple token revocation failed",
                metadata: ["app_id": "\(message.appID)", "message_id": "\(message.id)", "reason": "\(error.reason)"])
            return error.isTransient ? .transient(reply: error.reason) : .permanent(reply: error.reason)
        }
    }

    static func row(_ message: ClaimedMessage, _ finish: OutboxFinish) -> AuditEvent {
        let payload = try? Payload(message.payload)
        return finish.row(
            of: message,
            events: ("id_token.apple_revoked", "id_token.apple_revocation_retrying", "id_token.apple_revocation_failed"),
            reason: "apple_revocation_failed", credentialType: IDTokenPlugin.type, userID: payload?.userID,
            detail: ["provider": payload?.provider ?? ""])
    }
}
