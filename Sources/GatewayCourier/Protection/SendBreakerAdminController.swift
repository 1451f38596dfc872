import Foundation
import GatewayCore
public import GatewayPluginKit
public import Hummingbird

/// `/admin/v1/apps/{app_id}/send_breakers`: the pumping breakers an app's
/// channels tripped (``SendGuard/admitDelivery(to:_:_:)``), open or not, and
/// their release. Any admin of the app may look; releasing loosens the
/// app's protection, so it is an operator's, and leaves an
/// `admin.send_breaker.released` row.
public struct SendBreakerAdminController: Sendable {
    let apps: any AppStore
    let store: any SendProtectionStore

    public init(services: PluginServices) {
        self.apps = services.apps
        self.store = services.sendProtection
    }

    public func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("apps/{app_id}/send_breakers") { _, context in try await list(context) }
        group.delete("apps/{app_id}/send_breakers/{channel}/{prefix}") { _, context in try await release(context) }
    }

    private func list(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        guard try await apps.find(appID) != nil else { throw AdminErrors.appNotFound(appID) }
        let now = Date()
        return try AdminResponses.json(["send_breakers": try await store.trips(in: appID).map { BreakerResponse($0, now: now) }])
    }

    private func release(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let admin = try context.requireOperator()
        let channel = context.parameters.get("channel") ?? ""
        let raw = context.parameters.get("prefix") ?? ""
        let prefix = raw.removingPercentEncoding ?? raw
        guard ["sms", "email"].contains(channel) else { throw GatewayError.invalidRequest("The channel in the path must be sms or email.") }
        guard prefix.utf8.count >= 2, prefix.utf8.count <= 16, prefix.first == "+", prefix.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber })
        else { throw GatewayError.invalidRequest("The prefix in the path must be + and 1 to 15 digits (%2B for +).") }
        let event = AuditEvent(
            appID: appID, event: "admin.send_breaker.released", outcome: .success, requestID: context.requestID, actor: admin.id,
            detail: ["channel": channel, "prefix": prefix])
        guard try await store.release(prefix, channel: channel, in: appID, by: admin.id.uuidString.lowercased(), now: Date(), recording: event)
        else { throw GatewayError(.notFound, .notFound, "No breaker of that prefix is open for this app.") }
        return AdminResponses.noContent()
    }
}

/// A breaker as the admin API shows it.
struct BreakerResponse: Encodable, Sendable {
    let channel: String
    let prefix: String
    let open: Bool
    let tripped_at: String
    let open_until: String
    let threshold: Int
    let released_at: String?
    let released_by: String?

    init(_ trip: BreakerTrip, now: Date) {
        channel = trip.channel
        prefix = trip.prefix
        open = trip.isOpen(at: now)
        tripped_at = timestamp(trip.trippedAt)
        open_until = timestamp(trip.openUntil)
        threshold = trip.threshold
        released_at = trip.releasedAt.map(timestamp)
        released_by = trip.releasedBy
    }
}
