import GatewayApplication
import Foundation
import GatewayCore
import GatewayPostgres
import Logging
import NIOPosix
import PostgresNIO

/// The development app `identity-gateway dev` seeds on first start: a fixed
/// app id (so the README's curl works as written), a generated provider id and
/// RSA key, two static test users, email codes whose messages go to the log
/// (any address signs in as itself), sessions on (docs/tokens.md's worked
/// example), and self-service accounts: sign-up with a verified address,
/// recovery, a new address and deletion, their codes in the log too.
enum DemoApp {
    static let appID = AppID("layer:///apps/staging/4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e20")!
    static let users: [(id: String, password: String, first: String, last: String)] = [
        ("alice", "wonderland", "Alice", "Liddell"),
        ("bob", "builder", "Bob", "Builder"),
    ]

    /// Creates the demo app unless it exists. Key generation runs on NIO's
    /// blocking pool, off the cooperative threads.
    static func seed(client: PostgresClient, masterKey: MasterKey, logger: Logger) async throws {
        let apps = AppRepository(client: client, logger: logger)
        guard try await apps.find(appID) == nil else { return }
        let userList: [JSONValue] = users.map { user in
            .object([
                "user_id": .string(user.id), "password": .string(user.password), "first_name": .string(user.first),
                "last_name": .string(user.last), "display_name": .string("\(user.first) \(user.last)"),
            ])
        }
        let settings = AppSettings(
            appID: appID, name: "Demo app", environment: .development, providerID: ProviderID(uuid: UUID()),
            credentialTypes: ["static", "email_code", "password"],
            plugins: [
                "static": .object(["users": .array(userList)]),
                "email_code": .object([
                    "from": .string("codes@demo.example"), "sender": .object(["type": .string("log")]),
                    "allow_unknown_addresses": .bool(true),
                ]),
            ],
            sessions: SessionSettings(),
            selfService: SelfServiceSettings(
                signUp: .verifiedEmail, userIDs: .email, passwordReset: true, emailChange: true, accountDeletion: true))
        try await apps.insert(settings)
        let pair = try await NIOThreadPool.singleton.runIfActive { try RSAKeyPair.generate(bits: 2048) }
        try await AppKeyRepository(client: client, logger: logger).insert(
            StoredKey(appID: appID, keyID: KeyID(uuid: UUID()), status: .active, pair: pair, masterKey: masterKey))
        logger.info("seeded the demo app", metadata: ["app_id": "\(appID)"])
    }

    /// Stores the dev console's operator token unless it works already
    /// (first start, or after it was revoked).
    static func seedConsoleToken(_ secret: AdminTokenSecret, client: PostgresClient, logger: Logger) async throws {
        guard try await AdminTokenRepository(client: client, logger: logger).authenticate(secret) == nil else { return }
        _ = try await BootstrapToken.create(
            name: "dev console", scope: .operator, expiresAt: nil, secret: secret, client: client, logger: logger)
    }

    static func instructions(port: Int, consoleToken: AdminTokenSecret) -> String {
        let user = users[0]
        return """

            Console: http://127.0.0.1:\(port)/console
            Sign in with the admin token: \(consoleToken.text)

            Demo app ready: app_id layer:///apps/staging/\(appID)
            Static test users: \(users.map { "\($0.id) / \($0.password)" }.joined(separator: ", "))
            Get a token:
              curl -s localhost:\(port)/v1/identity_tokens -H 'content-type: application/json' \\
                -d '{"app_id":"layer:///apps/staging/\(appID)","user_id":"\(user.id)","nonce":"abc+/=123","credentials":{"type":"static","password":"\(user.password)"}}'
            Or by email code (the message, with its code, appears in this log):
              curl -s localhost:\(port)/v1/email_codes -H 'content-type: application/json' \\
                -d '{"app_id":"layer:///apps/staging/\(appID)","email":"ada@example.com"}'
              curl -s localhost:\(port)/v1/identity_tokens -H 'content-type: application/json' \\
                -d '{"app_id":"layer:///apps/staging/\(appID)","nonce":"abc","credentials":{"type":"email_code","email":"ada@example.com","code":"<code>"}}'

            """
    }
}
