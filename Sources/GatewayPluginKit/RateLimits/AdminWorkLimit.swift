public import GatewayCore

/// Admin routes whose work costs the gateway more than a database row (a
/// call out to a tenant's service, password hashing, RSA key generation)
/// are charged to the caller's token and to the app under the
/// ``RateLimitPolicy/adminWorkPerToken`` and ``RateLimitPolicy/adminWorkPerApp``
/// policies, on the counters every replica shares. Past either, 429 with
/// `Retry-After` and the `RateLimit` headers, before any of the work starts.
public struct AdminWorkLimit: Sendable {
    private let limits: any RequestLimits
    private let apps: any AppStore

    public init(limits: any RequestLimits, apps: any AppStore) {
        self.limits = limits
        self.apps = apps
    }

    /// Counts one unit of costly work by `admin` for `appID`; throws the 429
    /// when a budget is spent, 404 when there is no such app.
    public func charge(_ admin: AdminTokenRecord, for appID: AppID) async throws {
        guard let app = try await apps.find(appID) else { throw AdminErrors.appNotFound(appID) }
        let outcome = try await limits.check(
            [
                RateLimitPolicy.adminWorkPerToken.name: admin.id.lowercasedText,
                RateLimitPolicy.adminWorkPerApp.name: appID.uuid.lowercasedText,
            ], app: app.settings, clientCounted: false)
        guard outcome.refusal != nil else { return }
        var ignored = AuditEvent(appID: appID, event: "admin.work.refused", outcome: .failure, requestID: "")
        throw HeaderedError(outcome.refusalError(noting: &ignored), headers: outcome.headers)
    }
}
