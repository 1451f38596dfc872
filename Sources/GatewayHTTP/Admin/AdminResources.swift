import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayRuntime

/// The gateway's own resources as the admin API shows them.
enum AdminResources {
    struct App: Encodable {
        let app_id: String
        let name: String
        let environment: String
        let provider_id: String
        let token_ttl_seconds: Int
        let enabled: Bool
        let credential_types: [String]
        let plugins: [String: JSONValue]
        let rate_limits: [String: RateLimitOverride]
        /// The overrides an operator set: the app's own admin may not change them.
        let rate_limits_set_by_operator: [String]
        let token_profiles: [TokenProfileEntry]
        /// `null` while sessions are off.
        let sessions: SessionSettings?
        /// `null` while the second factor is off.
        let mfa: SecondFactorSettings?
        /// `null` while self-service is off.
        let self_service: SelfServiceSettings?
        let created_at: String
        let updated_at: String

        /// `plugins` redacts each plugin's secrets from its options, and each profile's from its settings.
        init(_ stored: StoredApp, plugins registry: PluginRegistry) {
            let settings = stored.settings
            let segment = settings.environment == .production ? "production" : "staging"
            app_id = "layer:///apps/\(segment)/\(settings.appID)"
            name = settings.name
            environment = settings.environment.rawValue
            provider_id = settings.providerID.description
            token_ttl_seconds = settings.tokenTTLSeconds
            enabled = settings.isEnabled
            credential_types = settings.credentialTypes
            plugins = registry.redacted(settings.plugins)
            rate_limits = settings.rateLimits
            rate_limits_set_by_operator = settings.rateLimitChanges.setByOperator.sorted()
            token_profiles = registry.redacted(settings.tokenProfiles)
            sessions = settings.sessions
            mfa = settings.mfa
            self_service = settings.selfService
            created_at = timestamp(stored.createdAt)
            updated_at = timestamp(stored.updatedAt)
        }
    }

    /// A key as the API shows it: never its private half.
    struct Key: Encodable {
        let key_id: String
        let status: String
        let bits: Int
        let created_at: String
        let activated_at: String?
        let retired_at: String?
        let public_key_pem: String
        let jwk: PublicJWK?

        init(_ key: StoredKey) {
            key_id = key.keyID.description
            status = key.status.rawValue
            bits = key.bits
            created_at = timestamp(key.createdAt)
            activated_at = key.activatedAt.map(timestamp)
            retired_at = key.retiredAt.map(timestamp)
            public_key_pem = key.publicKeyPEM
            jwk = PublicJWK(publicKeyPEM: key.publicKeyPEM, keyID: key.keyID)
        }
    }

    struct AdminToken: Encodable {
        let id: String
        let name: String
        let scope: String
        let created_at: String
        let expires_at: String?
        let revoked_at: String?
        let last_used_at: String?
        /// Only in the answer to the creation, never again.
        let token: String?

        init(_ record: AdminTokenRecord, secret: AdminTokenSecret? = nil) {
            id = record.id.lowercasedText
            name = record.name
            scope = record.scope.description
            created_at = timestamp(record.createdAt)
            expires_at = record.expiresAt.map(timestamp)
            revoked_at = record.revokedAt.map(timestamp)
            last_used_at = record.lastUsedAt.map(timestamp)
            token = secret?.text
        }
    }

    struct KeySet: Encodable {
        let keys: [PublicJWK]
    }
}
