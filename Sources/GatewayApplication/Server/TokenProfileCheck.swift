import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import Logging
import PostgresNIO

enum TokenProfileCheck {
    /// A production gateway does not start while an app lists a token
    /// profile this deployment cannot mint (`oidc` with no
    /// `oidc.issuer_base_url`): those apps' tokens would all fail. A
    /// development one says so and starts.
    static func run(
        _ profiles: TokenProfileRegistry, isProduction: Bool, client: PostgresClient, logger: Logger
    ) async throws {
        let apps = AppRepository(client: client, logger: logger)
        var problems: [String] = []
        for profile in profiles.all {
            guard let reason = profile.unavailableReason else { continue }
            let listing = try await apps.countListing(profile: profile.name)
            guard listing > 0 else { continue }
            problems.append("\(listing) app(s) issue \(profile.name) tokens, but \(reason)")
        }
        guard !problems.isEmpty else { return }
        if isProduction { throw ConfigurationProblems(problems) }
        for problem in problems { logger.warning("a token profile cannot be minted", metadata: ["problem": "\(problem)"]) }
    }
}
