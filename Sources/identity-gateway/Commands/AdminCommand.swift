import GatewayApplication
import ArgumentParser
import Foundation
import GatewayCore
import GatewayPostgres
import Logging

/// `identity-gateway admin ...`: the common operator tasks. `create-token`
/// writes to the database directly (it makes the first token); the others
/// call the admin REST API with a token.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Operator tasks: admin tokens, apps and keys.",
        subcommands: [
            CreateToken.self, RevokeToken.self, CreateApp.self, ImportKey.self, GenerateKey.self, ActivateKey.self,
        ])

    struct CreateToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an admin token in the database directly and print it (it is shown only once).")
        @OptionGroup var options: ConfigurationOptions
        @Option(help: "operator, or app:<app id>.") var scope: String
        @Option(help: "A name saying who or what uses the token.") var name: String
        @Option(help: "Expiry as an RFC 3339 time, e.g. 2027-01-31T00:00:00Z.") var expiresAt: String?

        func run() async throws {
            guard let scope = AdminScope(scope) else { throw ValidationError("--scope must be operator or app:<app id>") }
            let expiry = try expiresAt.map { text in
                guard let date = ISO8601DateFormatter().date(from: text) else {
                    throw ValidationError("--expires-at must be an RFC 3339 time")
                }
                return date
            }
            try await reportingProblems {
                let configuration = try await GatewayConfiguration.load(file: options.config)
                let logger = bootstrapLogging(level: .warning)
                let secret = AdminTokenSecret.generate()
                let record = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                    try await BootstrapToken.create(
                        name: name, scope: scope, expiresAt: expiry, secret: secret, client: client, logger: logger)
                }
                say("token id: \(record.id.lowercasedText)")
                say("scope:    \(record.scope)")
                say("token:    \(secret.text)")
            }
        }
    }

    struct RevokeToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an admin token by id.")
        @OptionGroup var api: AdminAPIOptions
        @Option(help: "The token id.") var id: String

        func run() async throws {
            try await api.client().send(.delete, "/admin/v1/admin_tokens/\(id)")
        }
    }

    struct CreateApp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app (tenant).")
        @OptionGroup var api: AdminAPIOptions
        @Option(help: "The Layer app id.") var appID: String
        @Option(help: "A human name.") var name: String
        @Option(help: "development or production.") var environment: String
        @Option(help: "The Layer provider id.") var providerID: String
        @Option(help: "Token lifetime, 30 to 600 seconds.") var tokenTTLSeconds: Int?
        @Option(name: .customLong("credential-type"), help: "A credential type to accept (repeat for several).")
        var credentialTypes: [String]
        @Option(help: "Plugin options as a JSON object, e.g. '{\"static\":{\"allow_any_user\":true}}'.")
        var plugins: String?

        func run() async throws {
            var body: [String: JSONValue] = [
                "app_id": .string(appID), "name": .string(name), "environment": .string(environment),
                "provider_id": .string(providerID), "credential_types": .array(credentialTypes.map(JSONValue.string)),
            ]
            if let tokenTTLSeconds { body["token_ttl_seconds"] = .number(Double(tokenTTLSeconds)) }
            if let plugins {
                guard case .object? = try? JSONCoding.value(plugins) else {
                    throw ValidationError("--plugins must be a JSON object")
                }
                body["plugins"] = try JSONCoding.value(plugins)
            }
            try await api.client().send(.post, "/admin/v1/apps", json: body)
        }
    }

    struct ImportKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Import the private key Layer's dashboard gave.")
        @OptionGroup var api: AdminAPIOptions
        @Option(help: "The app id.") var appID: String
        @Option(help: "The Layer key id of this key.") var keyID: String
        @Option(help: "A PEM file holding the RSA private key (PKCS#1 or PKCS#8).") var pemFile: String

        func run() async throws {
            let pem = try String(contentsOfFile: pemFile, encoding: .utf8)
            try await api.client().send(
                .post, "/admin/v1/apps/\(AdminAPIClient.escape(appID))/keys", json: ["key_id": .string(keyID), "private_key_pem": .string(pem)])
        }
    }

    struct GenerateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Generate a signing key for an app.")
        @OptionGroup var api: AdminAPIOptions
        @Option(help: "The app id.") var appID: String
        @Option(help: "2048, 3072 or 4096.") var bits = 2048

        func run() async throws {
            try await api.client().send(
                .post, "/admin/v1/apps/\(AdminAPIClient.escape(appID))/keys", json: ["generate": .object(["bits": .number(Double(bits))])])
        }
    }

    struct ActivateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key the app's signing key; the previous one retires.")
        @OptionGroup var api: AdminAPIOptions
        @Option(help: "The app id.") var appID: String
        @Option(help: "The key id.") var keyID: String

        func run() async throws {
            try await api.client().send(
                .post, "/admin/v1/apps/\(AdminAPIClient.escape(appID))/keys/\(AdminAPIClient.escape(keyID))/activate")
        }
    }
}

/// Where the admin API is and the token to call it with.
struct AdminAPIOptions: ParsableArguments {
    @Option(help: "The gateway's base URL (default: GATEWAY_ADMIN_URL, else http://127.0.0.1:8080).")
    var url: String?
    @Option(help: "An admin token (default: GATEWAY_ADMIN_TOKEN).")
    var token: String?

    func client() throws -> AdminAPIClient {
        let environment = ProcessInfo.processInfo.environment
        guard let token = token ?? environment["GATEWAY_ADMIN_TOKEN"] else {
            throw ValidationError("give an admin token with --token or GATEWAY_ADMIN_TOKEN")
        }
        let base = url ?? environment["GATEWAY_ADMIN_URL"] ?? "http://127.0.0.1:8080"
        guard let baseURL = URL(string: base) else { throw ValidationError("--url is not a URL") }
        return AdminAPIClient(baseURL: baseURL, token: token)
    }
}
