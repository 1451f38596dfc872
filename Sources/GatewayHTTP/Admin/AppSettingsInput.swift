import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayRuntime

/// Reads app settings from an admin request and checks them against what
/// this gateway offers: every problem is a 400 naming the field.
struct AppSettingsInput {
    static let fields: Set<String> = [
        "app_id", "name", "environment", "provider_id", "token_ttl_seconds", "enabled", "credential_types", "plugins",
        "rate_limits", "token_profiles", "sessions", "mfa", "self_service",
    ]

    let plugins: PluginRegistry
    let pluginServices: PluginServices
    let rateLimits: RateLimitSettings
    /// Seals plugin secrets for storage, and opens stored ones to check them.
    let masterKey: MasterKey

    /// The settings of a new app (`POST /admin/v1/apps`), its plugin secrets sealed for storage.
    func create(from input: JSONInput) throws(GatewayError) -> AppSettings {
        try input.rejectUnknown(allowed: Self.fields)
        guard let appID = AppID(try input.requiredString("app_id")) else {
            throw .invalidRequest("app_id must be layer:///apps/staging/<uuid>, layer:///apps/production/<uuid> or a UUID.")
        }
        var settings = AppSettings(
            appID: appID, name: "", environment: .development, providerID: ProviderID(uuid: UUID()),
            credentialTypes: [])
        for required in ["name", "environment", "provider_id", "credential_types"] where !input.has(required) {
            throw .invalidRequest("\(required) is required.")
        }
        try apply(input, to: &settings)
        // Only an operator creates apps: every override it sets is the operator's.
        settings.rateLimitChanges = RateLimitChanges(setByOperator: Set(settings.rateLimits.keys))
        return try sealed(settings)
    }

    /// The settings after a `PATCH` of `current` (as stored) by an operator
    /// or the app's own admin: only the fields present change; plugin secrets
    /// are sealed for storage; a change of `rate_limits` notes who made it and
    /// which policies' periods changed (``RateLimitChanges``).
    func update(_ current: AppSettings, from input: JSONInput, byOperator: Bool, now: Date = Date()) throws(GatewayError)
        -> AppSettings
    {
        try input.rejectUnknown(allowed: Self.fields)
        if let appID = try input.string("app_id"), AppID(appID) != current.appID {
            throw .invalidRequest("app_id cannot be changed.")
        }
        var settings: AppSettings
        do {
            settings = try plugins.openingSecrets(of: current, with: masterKey)
        } catch {
            throw .internalError
        }
        try apply(input, to: &settings)
        if input.has("rate_limits") {
            settings.rateLimitChanges = current.rateLimitChanges.after(
                settings.rateLimits, replacing: current.rateLimits, byOperator: byOperator,
                defaultPeriods: rateLimits.policies.mapValues(\.periodSeconds), now: Int64(now.timeIntervalSince1970))
        }
        return try sealed(settings)
    }

    private func sealed(_ settings: AppSettings) throws(GatewayError) -> AppSettings {
        do {
            return try plugins.sealingSecrets(of: settings, with: masterKey)
        } catch {
            throw .internalError
        }
    }

    /// 403 naming the field when an app's own admin (not an operator) makes
    /// a change only an operator may: the app's identity to Layer
    /// (`provider_id`, which the validator finds keys by), its `environment`,
    /// turning on an app that is off, changing or removing an override the
    /// operator set (its limit or its period: counters are kept by windows of
    /// the period), a rate limit looser than the deployment's default for
    /// that policy or than the app's own override in place, or removing an
    /// override (tighter limits of its own, and leaving a limit as it was,
    /// are the app admin's to set); and loosening a second factor in place
    /// (turning `mfa` off, `required` to `optional`, another exempt
    /// credential type, a longer ticket lifetime), which may have been the
    /// operator's: turning it on and tightening it are the app admin's; and
    /// loosening sessions (``SessionSettings/loosening(of:)``) past those in
    /// place, or past the defaults when they are turned on: an app admin
    /// turns them on as the defaults are, or tighter, and off.
    func requireOperatorFor(_ updated: AppSettings, from current: AppSettings) throws(GatewayError) {
        func operatorOnly(_ what: String) -> GatewayError {
            GatewayError(.insufficientScope, .forbidden, "\(what) needs an operator token.")
        }
        if updated.providerID != current.providerID { throw operatorOnly("Changing provider_id") }
        if updated.environment != current.environment { throw operatorOnly("Changing environment") }
        if updated.isEnabled && !current.isEnabled { throw operatorOnly("Enabling a disabled app") }
        for name in current.rateLimitChanges.setByOperator.sorted() where updated.rateLimits[name] != current.rateLimits[name] {
            throw operatorOnly("rate_limits.\(name) was set by an operator; changing or removing it")
        }
        for (name, override) in updated.rateLimits.sorted(by: { $0.key < $1.key }) where current.rateLimits[name] != override {
            guard let deployment = rateLimits.policies[name] else { continue }
            if Self.isLooser(override, than: deployment.limit, per: deployment.periodSeconds) {
                throw operatorOnly(
                    "rate_limits.\(name) looser than the deployment's \(deployment.limit) per \(deployment.periodSeconds) s")
            }
            // An override in place may have been the operator's: an app admin only tightens it.
            if let stored = current.rateLimits[name], Self.isLooser(override, than: stored.limit, per: stored.periodSeconds) {
                throw operatorOnly("rate_limits.\(name) looser than its current \(stored.limit) per \(stored.periodSeconds) s")
            }
        }
        for name in current.rateLimits.keys.sorted() where updated.rateLimits[name] == nil {
            throw operatorOnly("Removing rate_limits.\(name)")
        }
        // A second factor in place may have been the operator's: an app admin only tightens it.
        if let stored = current.mfa {
            guard let next = updated.mfa else { throw operatorOnly("Turning the second factor (mfa) off") }
            if stored.requirement == .required && next.requirement != .required {
                throw operatorOnly("Loosening mfa.requirement from required")
            }
            if let added = next.exemptCredentialTypes.first(where: { !stored.exemptCredentialTypes.contains($0) }) {
                throw operatorOnly("Exempting \(added) from the second factor (mfa.exempt_credential_types)")
            }
            if next.ticketLifetimeSeconds > stored.ticketLifetimeSeconds {
                throw operatorOnly("Lengthening mfa.ticket_lifetime_seconds")
            }
        }
        // Sessions may be the operator's policy too: an app admin only keeps or tightens them.
        if let next = updated.sessions, let loosened = next.loosening(of: current.sessions ?? SessionSettings()) {
            throw operatorOnly("Loosening sessions.\(loosened)")
        }
        // Who may create an account, and how long a code lives, may be the operator's too.
        if let next = updated.selfService, let loosened = next.loosening(of: current.selfService ?? SelfServiceSettings()) {
            throw operatorOnly("Loosening self_service.\(loosened)")
        }
        if let path = plugins.operatorOnlyChange(of: updated, from: current) { throw operatorOnly("Changing \(path)") }
        // A plugin's protections (a channel's send protection) are the operator's to loosen.
        if let loosened = plugins.loosening(of: updated, from: current) {
            throw operatorOnly("Loosening \(loosened)")
        }
    }

    private static func isLooser(_ override: RateLimitOverride, than limit: Int, per periodSeconds: Int) -> Bool {
        let perSecond = Double(override.limit) / Double(override.periodSeconds)
        return override.limit > limit || perSecond > Double(limit) / Double(periodSeconds)
    }

    /// The settings whose `null` means nothing (unlike `sessions`, `mfa` and
    /// `self_service`, whose `null` turns them off): refused, not read as absent.
    static let notNullable = [
        "name", "environment", "provider_id", "token_ttl_seconds", "enabled", "credential_types", "plugins", "rate_limits",
        "token_profiles",
    ]

    private func apply(_ input: JSONInput, to settings: inout AppSettings) throws(GatewayError) {
        if let null = Self.notNullable.first(where: { input.members[$0] == .null }) {
            throw .invalidRequest("\(null) may not be null; leave it out to keep it as it is.")
        }
        if let name = try input.string("name") {
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard (1...200).contains(trimmed.utf8.count) else { throw .invalidRequest("name must be 1 to 200 bytes.") }
            settings.name = trimmed
        }
        if let environment = try input.string("environment") {
            guard let parsed = AppEnvironment(rawValue: environment) else {
                throw .invalidRequest("environment must be development or production.")
            }
            settings.environment = parsed
        }
        if let provider = try input.string("provider_id") {
            guard let parsed = ProviderID(provider) else {
                throw .invalidRequest("provider_id must be layer:///providers/<uuid> or a UUID.")
            }
            settings.providerID = parsed
        }
        if let ttl = try input.integer("token_ttl_seconds") {
            guard AppSettings.tokenTTLRange.contains(ttl) else {
                throw .invalidRequest("token_ttl_seconds must be between 30 and 600.")
            }
            settings.tokenTTLSeconds = ttl
        }
        if let enabled = try input.bool("enabled") { settings.isEnabled = enabled }
        if let types = try input.strings("credential_types") { settings.credentialTypes = types }
        if let options = try input.object("plugins") {
            // A secret sent back as ******** keeps the stored one, where it would still go where it went.
            settings.plugins = plugins.keepingSecrets(options.members, stored: settings.plugins)
        }
        if let limits = try input.object("rate_limits") {
            try AppSettingSchemas.rateLimits.check(.object(limits.members), path: "rate_limits")
            settings.rateLimits = try rateLimitOverrides(limits)
        }
        for setting in AppSettingSchemas.all {
            if let value = input.members[setting.member], value != .null { try setting.schema.check(value, path: setting.member) }
        }
        if input.has("sessions") { settings.sessions = try Self.sessionSettings(input.object("sessions")) }
        if input.has("mfa") { settings.mfa = try Self.secondFactorSettings(input.object("mfa")) }
        if input.has("self_service") { settings.selfService = try Self.selfServiceSettings(input.object("self_service")) }
        if let entries = try input.objects("token_profiles", maximumCount: TokenProfileRegistry.maximumPerApp) {
            let listed = try entries.map { entry throws(GatewayError) in
                let type = try entry.requiredString("type")
                return TokenProfileEntry(type: type, options: entry.members.filter { $0.key != "type" })
            }
            // A secret sent back as ******** keeps the stored one of the profile of that type.
            let kept = plugins.profiles.keepingSecrets(listed, stored: settings.tokenProfiles)
            try plugins.profiles.checkDeclared(kept)
            settings.tokenProfiles = kept
        }
        try check(settings)
    }

    /// `sessions`: an object turns sessions on, each setting its default
    /// unless given (the whole object is the app's settings, as `plugins`
    /// are); `null` turns them off.
    static func sessionSettings(_ input: JSONInput?) throws(GatewayError) -> SessionSettings? {
        guard let input else { return nil }
        try input.rejectUnknown(allowed: [
            "idle_timeout_seconds", "absolute_lifetime_seconds", "reuse_grace_seconds", "max_sessions_per_user",
            "revoke_on_password_change",
        ])
        var settings = SessionSettings()
        if let idle = try input.integer("idle_timeout_seconds", in: SessionSettings.idleTimeoutRange) {
            settings.idleTimeoutSeconds = idle
        }
        if let lifetime = try input.integer("absolute_lifetime_seconds", in: SessionSettings.absoluteLifetimeRange) {
            settings.absoluteLifetimeSeconds = lifetime
        }
        if let grace = try input.integer("reuse_grace_seconds", in: SessionSettings.reuseGraceRange) {
            settings.reuseGraceSeconds = grace
        }
        if let maximum = try input.integer("max_sessions_per_user", in: SessionSettings.maximumPerUserRange) {
            settings.maximumPerUser = maximum
        }
        if let revokes = try input.bool("revoke_on_password_change") { settings.revokeOnPasswordChange = revokes }
        guard settings.idleTimeoutSeconds <= settings.absoluteLifetimeSeconds else {
            throw .invalidRequest("sessions.idle_timeout_seconds must be at most sessions.absolute_lifetime_seconds.")
        }
        return settings
    }

    /// `mfa`: an object turns the second factor on (`requirement`
    /// `optional` unless given), the whole object being the app's settings;
    /// `null` turns it off.
    static func secondFactorSettings(_ input: JSONInput?) throws(GatewayError) -> SecondFactorSettings? {
        guard let input else { return nil }
        try input.rejectUnknown(allowed: ["requirement", "exempt_credential_types", "ticket_lifetime_seconds", "issuer"])
        var settings = SecondFactorSettings()
        if let requirement = try input.string("requirement") {
            guard let parsed = SecondFactorSettings.Requirement(rawValue: requirement) else {
                throw .invalidRequest("mfa.requirement must be optional or required.")
            }
            settings.requirement = parsed
        }
        if let exempt = try input.strings("exempt_credential_types", maximumCount: 32) {
            settings.exemptCredentialTypes = exempt
        }
        if let lifetime = try input.integer("ticket_lifetime_seconds", in: SecondFactorSettings.ticketLifetimeRange) {
            settings.ticketLifetimeSeconds = lifetime
        }
        if let issuer = try input.string("issuer") {
            guard !issuer.isEmpty, issuer.utf8.count <= SecondFactorSettings.maximumIssuerBytes else {
                throw .invalidRequest("mfa.issuer must be 1 to \(SecondFactorSettings.maximumIssuerBytes) bytes.")
            }
            settings.issuer = issuer
        }
        return settings
    }

    /// `self_service`: an object (each setting its default, every flow off,
    /// unless given); `null` turns self-service off.
    static func selfServiceSettings(_ input: JSONInput?) throws(GatewayError) -> SelfServiceSettings? {
        guard let input else { return nil }
        typealias Key = SelfServiceSettings.CodingKeys
        try input.rejectUnknown(allowed: Set(Key.allCases.map(\.rawValue)))
        var settings = SelfServiceSettings()
        if let signUp = try input.string(Key.signUp.rawValue) {
            guard let parsed = SelfServiceSettings.SignUp(rawValue: signUp) else {
                throw .invalidRequest("self_service.sign_up must be closed, verified_email or open.")
            }
            settings.signUp = parsed
        }
        if let userIDs = try input.string(Key.userIDs.rawValue) {
            guard let parsed = SelfServiceSettings.UserIDs(rawValue: userIDs) else {
                throw .invalidRequest("self_service.user_ids must be generated or email.")
            }
            settings.userIDs = parsed
        }
        if let on = try input.bool(Key.passwordReset.rawValue) { settings.passwordReset = on }
        if let on = try input.bool(Key.emailChange.rawValue) { settings.emailChange = on }
        if let on = try input.bool(Key.accountDeletion.rawValue) { settings.accountDeletion = on }
        if let ttl = try input.integer(Key.codeLifetimeSeconds.rawValue, in: SelfServiceSettings.codeLifetimes) {
            settings.codeLifetimeSeconds = ttl
        }
        if let attempts = try input.integer(Key.maximumAttempts.rawValue, in: SelfServiceSettings.attempts) {
            settings.maximumAttempts = attempts
        }
        if let recent = try input.integer(Key.recentSignInSeconds.rawValue, in: SelfServiceSettings.recentSignIns) {
            settings.recentSignInSeconds = recent
        }
        return settings
    }

    /// `{policy: {limit, period_seconds}}` for known policies, within bounds.
    private func rateLimitOverrides(_ input: JSONInput) throws(GatewayError) -> [String: RateLimitOverride] {
        var overrides: [String: RateLimitOverride] = [:]
        for name in input.members.keys.sorted() {
            guard rateLimits.policies[name] != nil, !RateLimitPolicy.deploymentOnlyNames.contains(name) else {
                let known = rateLimits.policies.keys.filter { !RateLimitPolicy.deploymentOnlyNames.contains($0) }.sorted()
                    .joined(separator: ", ")
                throw .invalidRequest("rate_limits.\(name) is not a rate-limit policy (there are: \(known)).")
            }
            guard let entry = try input.object(name) else { throw .invalidRequest("rate_limits.\(name) must be an object.") }
            try entry.rejectUnknown(allowed: ["limit", "period_seconds"])
            guard let limit = try entry.integer("limit"), RateLimitPolicy.limitRange.contains(limit),
                let period = try entry.integer("period_seconds"), RateLimitPolicy.periodRange.contains(period)
            else {
                throw .invalidRequest(
                    "rate_limits.\(name) needs limit (1 to 1000000) and period_seconds (1 to 86400).")
            }
            overrides[name] = RateLimitOverride(limit: limit, periodSeconds: period)
        }
        return overrides
    }

    /// The credential types self-service stands on.
    static let selfServiceTypes = ["password", "email_code"]

    /// Cross-field rules: known, distinct credential types; options only for
    /// those types; and each plugin accepting its options for this app.
    private func check(_ settings: AppSettings) throws(GatewayError) {
        let types = settings.credentialTypes
        guard !types.isEmpty else { throw .invalidRequest("credential_types must name at least one credential type.") }
        guard Set(types).count == types.count else { throw .invalidRequest("credential_types must not repeat a type.") }
        let offered = plugins.credentialTypes
        if let unknown = types.first(where: { !offered.contains($0) }) {
            throw .invalidRequest(
                "credential_types: '\(unknown)' is not offered by this gateway (it offers: \(offered.joined(separator: ", "))).")
        }
        if let exempt = settings.mfa?.exemptCredentialTypes.first(where: { !offered.contains($0) }) {
            throw .invalidRequest("mfa.exempt_credential_types: '\(exempt)' is not a credential type of this gateway.")
        }
        // Self-service keeps its accounts in the password directory and mails its codes as email codes do.
        if settings.selfService?.mailsCodes == true, let missing = Self.selfServiceTypes.first(where: { !types.contains($0) }) {
            throw .invalidRequest("self_service needs '\(missing)' among credential_types (its accounts are password users, its mail goes as email codes do).")
        }
        if let stray = settings.plugins.keys.sorted().first(where: { !types.contains($0) }) {
            throw .invalidRequest("plugins.\(stray): '\(stray)' is not among credential_types.")
        }
        try plugins.checkDeclaredOptions(settings.plugins)
        for case let (_, .failure(error)) in plugins.verifiers(for: settings, services: pluginServices) {
            throw .invalidRequest(error.message)
        }
        try plugins.profiles.check(settings)
    }
}
