import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import Yams

/// Tenant isolation as a property over every operation `openapi.yaml` lists
/// (the contract test holds it equal to the routes served), so a new route
/// is attacked without anyone adding it here. For random pairs of apps A and
/// B, A's admin token is sent at every admin operation naming B's app, key,
/// user and number: each answers 403 or 404, says nothing of B, and B reads
/// the same afterwards. A's credentials are sent to every token operation
/// with B's app id: none gives a token. Public operations that read no
/// tenant's data must be named below, with the reason.
@Suite struct TenantIsolationPropertyTests {
    struct Operation: CustomStringConvertible {
        let method: String
        let path: String
        let operationID: String
        let isAdmin: Bool
        let bodyType: String?
        var description: String { "\(method.uppercased()) \(path)" }
    }

    /// Public operations that serve no tenant's secrets, and why.
    static let publicByDesign: [String: String] = [
        "health": "liveness, no data",
        "ready": "readiness, no data",
        "metrics": "counts without app ids",
        "getAppKeySet": "public keys are public",
        "validateIdentityToken": "judges a token the caller already holds, names its app",
        "sendPhoneCode": "answers bound and unbound numbers alike (NumberPrivacyTests)",
        "sendEmailCode": "answers an address of a user and one of nobody alike, (EmailCodeDeliveryTests); its mail goes only through the app's own sender",
        "signUp": "answers a registered address and a new one alike (SelfServiceTests); its mail goes only through the app's own sender",
        "sendVerification": "answers any address alike (SelfServiceTests)",
        "confirmVerification": "a code only the address's mailbox has, bound to the app",
        "sendPasswordReset": "answers any address alike (SelfServiceTests)",
        "resetPassword": "a code only the address's mailbox has, bound to the app, and the account's second factor",
        "changePassword": "the app's own session and the current password",
        "sendEmailChange": "the app's own session, recently signed in",
        "confirmEmailChange": "the app's own session and a code only the new address has",
        "deleteAccount": "the app's own session, recently signed in, or the password",
        "getOpenIDConfiguration": "an issuer's public document: its URL and where its public keys are",
        "passkeyAuthenticationOptions": "a sign-in challenge for anyone, bound to the app; names only the app's rp_id",
    ]

    static func operations() throws -> [Operation] {
        let document = try #require(
            try Yams.load(yaml: String(contentsOf: openAPIDocumentURL, encoding: .utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var operations: [Operation] = []
        for (path, item) in paths {
            for method in ["get", "put", "post", "patch", "delete"] {
                guard let operation = item[method] as? [String: Any] else { continue }
                let content = (operation["requestBody"] as? [String: Any])?["content"] as? [String: Any]
                operations.append(
                    Operation(
                        method: method, path: path, operationID: operation["operationId"] as? String ?? "",
                        isAdmin: operation["security"] != nil, bodyType: content?.keys.sorted().first))
            }
        }
        return operations.sorted { $0.description < $1.description }
    }

    /// A body that would do something had the caller the right: changes,
    /// new keys, users and bindings. Any other operation gets `{}`.
    static func body(for operation: Operation, appID: String) -> String {
        switch operation.operationID {
        case "createApp": String(decoding: try! JSONSerialization.data(withJSONObject: newAppBody()), as: UTF8.self)
        case "updateApp":
            #"{"name": "taken over", "enabled": false, "token_profiles": [{"type": "stream", "api_key": "k", "api_secret": "taken over secret 123"}]}"#
        case "createKey": #"{"generate": {}}"#
        case "putUser", "updateUser": #"{"password": "taken over 123", "disabled": true}"#
        case "bindPhoneNumber": #"{"user_id": "intruder"}"#
        case "createAdminToken": #"{"name": "intruder", "scope": "app:\#(appID)"}"#
        case "importUsers": #"{"user_id": "intruder", "password": "taken over 123"}"# + "\n"
        default: "{}"
        }
    }

    struct Tenant {
        let appID: String
        let keyID: String
        let token: String
        let secretName: String
        /// The static user's session's refresh token.
        let refreshToken: String
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func anAppsAdminTokenAndCredentialsNeverReachAnotherApp(round: UInt64) async throws {
        let seed = UInt64(Date().timeIntervalSince1970 * 1000) ^ round
        let operations = try Self.operations()
        try await TestGateway.with(plugins: .installed) { gateway in
            var random = SplitMix64(seed: seed)
            let operatorToken = try await gateway.adminToken(.operator)
            var tenants: [Tenant] = []
            for index in 0..<3 {
                tenants.append(try await Self.makeTenant(gateway, operatorToken: operatorToken, index: index))
            }
            let pair = tenants.shuffled(using: &random).prefix(2)
            let (a, b) = (pair.first!, pair.last!)
            let before = try await Self.snapshot(of: b, gateway, operatorToken: operatorToken)
            let victimTokenID = try #require(
                try jsonObject(try await gateway.admin(.post, "/admin/v1/admin_tokens", token: operatorToken, json: ["name": "victim", "scope": "operator"]))["id"]
                    as? String)

            for operation in operations {
                let path = operation.path
                    .replacingOccurrences(of: "{app_id}", with: b.appID)
                    .replacingOccurrences(of: "{key_id}", with: b.keyID)
                    .replacingOccurrences(of: "{user_id}", with: "ada")
                    .replacingOccurrences(of: "{phone_number}", with: "%2B15550000001")
                    .replacingOccurrences(of: "{token_id}", with: victimTokenID)
                    .replacingOccurrences(of: "{credential_id}", with: "AQI")
                var headers: HTTPFields = [:]
                var body: ByteBuffer?
                if operation.isAdmin { headers[.authorization] = "Bearer \(a.token)" }
                if let type = operation.bodyType {
                    headers[.contentType] = type
                    body = ByteBuffer(string: Self.body(for: operation, appID: b.appID))
                }
                if operation.isAdmin {
                    let (headers, body) = (headers, body)
                    let response = try await gateway.test {
                        try await $0.execute(uri: path, method: HTTPRequest.Method(operation.method.uppercased())!, headers: headers, body: body)
                    }
                    if operation.operationID == "getCallingAdminToken" {
                        // Names no app: A reads its own token, and only that.
                        #expect(response.status == .ok && text(response).contains(a.appID) && !text(response).contains(b.appID))
                        continue
                    }
                    #expect([403, 404].contains(response.status.code), "seed \(seed): \(operation) as A on B: \(response.status.code) \(text(response))")
                    #expect(!text(response).contains(b.secretName), "seed \(seed): \(operation) told A of B")
                } else if operation.operationID.hasPrefix("issueIdentityToken") {
                    for credentials in [
                        ["user_id": "alice-\(a.secretName)", "type": "static", "password": "static \(a.secretName)"],
                        ["user_id": "ada", "type": "password", "password": "password \(a.secretName)"],
                    ] {
                        let request: [String: any Sendable] = [
                            "app_id": b.appID, "user_id": credentials["user_id"]!, "nonce": "n-\(seed)",
                            "credentials": credentials.filter { $0.key != "user_id" },
                        ]
                        let response = try await gateway.test { try await $0.postJSON(request, to: path) }
                        #expect(response.status.code != 200, "seed \(seed): \(operation) signed for B with A's \(credentials["type"]!) user")
                        #expect(identityToken(in: response) == nil)
                    }
                } else if operation.operationID == "signOut" {
                    // A's refresh token, sent as B's: it ends nothing, of B's or of A's.
                    let request: [String: any Sendable] = ["app_id": b.appID, "refresh_token": a.refreshToken]
                    #expect(try await gateway.test { try await $0.postJSON(request, to: path) }.status == .noContent)
                    let refresh: [String: any Sendable] = [
                        "app_id": a.appID, "nonce": "n-\(seed)",
                        "credentials": ["type": "refresh_token", "refresh_token": a.refreshToken],
                    ]
                    let own = try await gateway.test { try await $0.postJSON(refresh) }
                    #expect(own.status == .ok, "seed \(seed): B's sign-out ended A's session: \(text(own))")
                    let asB: [String: any Sendable] = refresh.merging(["app_id": b.appID]) { _, new in new }
                    #expect(try await gateway.test { try await $0.postJSON(asB) }.status == .unauthorized, "A's refresh token signed for B")
                } else if ["enrolTOTP", "confirmTOTP", "replaceRecoveryCodes"].contains(operation.operationID) {
                    // A's session, sent as B's: nobody of B's gets (or loses) a factor, and nothing is shown.
                    let request: [String: any Sendable] = ["app_id": b.appID, "refresh_token": a.refreshToken, "code": "000000"]
                    let sent = operation.operationID == "enrolTOTP" ? request.filter { $0.key != "code" } : request
                    let response = try await gateway.test { try await $0.postJSON(sent, to: path) }
                    #expect(response.status == .unauthorized, "seed \(seed): \(operation) as A on B: \(text(response))")
                    #expect(!text(response).contains("otpauth") && !text(response).contains("recovery_codes"))
                } else if ["passkeyRegistrationOptions", "registerPasskey"].contains(operation.operationID) {
                    // A's session, sent as B's: no challenge for any user of B's, no passkey registered.
                    let request: [String: any Sendable] = [
                        "app_id": b.appID, "refresh_token": a.refreshToken, "client_data_json": "e30", "attestation_object": "oA",
                    ]
                    let sent = operation.operationID == "registerPasskey" ? request : request.filter { $0.key == "app_id" || $0.key == "refresh_token" }
                    let response = try await gateway.test { try await $0.postJSON(sent, to: path) }
                    #expect(response.status == .unauthorized, "seed \(seed): \(operation) as A on B: \(text(response))")
                    #expect(!text(response).contains("challenge") && !text(response).contains("credential_id"))
                } else {
                    #expect(Self.publicByDesign[operation.operationID] != nil, "\(operation) is public: attack it here or say why it needs no attack")
                }
            }
            let after = try await Self.snapshot(of: b, gateway, operatorToken: operatorToken)
            #expect(after == before, "seed \(seed): B changed")
        }
    }

    /// An app of every plugin: a static user and a password user whose
    /// passwords hold its secret name, a bound number, a key, token profiles
    /// whose secrets hold it, and an app-scoped token.
    static func makeTenant(_ gateway: TestGateway, operatorToken: String, index: Int) async throws -> Tenant {
        let appID = UUID().lowercasedText
        let secretName = "secret-\(index)-\(UUID().uuidString.prefix(8))"
        let plugins: [String: any Sendable] = [
            "static": ["users": [["user_id": "alice-\(secretName)", "password": "static \(secretName)"]]],
            "phone_code": ["sender": ["type": "log"]],
            "passkey": ["rp_id": "example.com"],
        ]
        let created = try await gateway.admin(
            .post, "/admin/v1/apps", token: operatorToken,
            json: [
                "app_id": appID, "name": secretName, "environment": "development", "provider_id": UUID().uuidString,
                "credential_types": ["static", "password", "phone_code", "passkey"], "plugins": plugins, "sessions": [String: Int](),
                "mfa": [String: Int](),
                "token_profiles": [
                    ["type": "layer"], ["type": "stream", "api_key": "k", "api_secret": "stream profile \(secretName)"],
                    [
                        "type": "twilio", "account_sid": "AC" + String(repeating: "0a", count: 16),
                        "api_key_sid": "SK" + String(repeating: "1b", count: 16), "api_key_secret": "twilio profile \(secretName)",
                        "chat_service_sid": "IS" + String(repeating: "2c", count: 16),
                    ],
                ] as [[String: String]],
            ])
        #expect(created.status == .created, "\(text(created))")
        #expect(!text(created).contains("profile \(secretName)"), "profile secrets are never answered, even to an operator")
        let key = try await gateway.admin(.post, "/admin/v1/apps/\(appID)/keys", token: operatorToken, json: ["generate": [:] as [String: Int]])
        let keyID = try #require(try jsonObject(key)["key_id"] as? String)
        let user = try await gateway.admin(
            .put, "/admin/v1/apps/\(appID)/users/ada", token: operatorToken,
            json: ["password": "password \(secretName)", "display_name": secretName])
        #expect(user.status == .created)
        let bound = try await gateway.admin(
            .put, "/admin/v1/apps/\(appID)/phone_numbers/%2B15550000001", token: operatorToken, json: ["user_id": "ada"])
        #expect(bound.status == .created)
        let token = try await gateway.adminToken(.app(AppID(appID)!))
        let signIn: [String: any Sendable] = [
            "app_id": appID, "user_id": "alice-\(secretName)", "nonce": "n",
            "credentials": ["type": "static", "password": "static \(secretName)"],
        ]
        let signedIn = try jsonObject(try await gateway.test { try await $0.postJSON(signIn) })
        let refreshToken = try #require(signedIn["refresh_token"] as? String, "\(signedIn)")
        return Tenant(appID: appID, keyID: keyID, token: token, secretName: secretName, refreshToken: refreshToken)
    }

    /// What an operator reads of the app: settings, keys, users and bindings.
    static func snapshot(of tenant: Tenant, _ gateway: TestGateway, operatorToken: String) async throws -> [String] {
        var texts: [String] = []
        for path in [
            "", "/keys", "/users", "/users/ada", "/phone_numbers", "/users/alice-\(tenant.secretName)/sessions",
            "/users/alice-\(tenant.secretName)/mfa", "/users/alice-\(tenant.secretName)/passkeys",
        ] {
            let response = try await gateway.admin(.get, "/admin/v1/apps/\(tenant.appID)\(path)", token: operatorToken)
            // No user of a tenant has a factor: its 404 must stay one.
            #expect(response.status == (path.hasSuffix("/mfa") ? .notFound : .ok), "\(path)")
            texts.append(path.hasSuffix("/mfa") ? "\(response.status.code)" : text(response))
        }
        return texts
    }
}
