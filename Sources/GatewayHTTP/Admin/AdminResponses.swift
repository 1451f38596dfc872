public import Foundation
import GatewayCore
public import Hummingbird
import NIOCore

/// JSON shapes the admin API answers with.
public enum AdminResponses {
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
        let created_at: String
        let updated_at: String

        /// `plugins` redacts each plugin's secrets from its options.
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

    public struct Page<Item: Encodable>: Encodable {
        public let items: [Item]
        public let next_cursor: String?

        public init(items: [Item], next_cursor: String?) {
            self.items = items
            self.next_cursor = next_cursor
        }

        private enum CodingKeys: String, CodingKey { case items, next_cursor }

        /// `next_cursor` is written as `null` on the last page rather than
        /// left out: openapi.yaml makes it a required member.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(items, forKey: .items)
            try container.encode(next_cursor, forKey: .next_cursor)
        }
    }

    struct KeySet: Encodable {
        let keys: [PublicJWK]
    }

    /// The encoder of every JSON answer: stable member order, `/` unescaped.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = encoder()
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    public static func noContent() -> Response {
        Response(status: .noContent)
    }
}

/// RFC 3339 in UTC with seconds, as every time in the API is written.
public func timestamp(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
}
