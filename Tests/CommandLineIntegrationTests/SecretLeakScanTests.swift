import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import PostgresNIO
import Testing

/// Every flow driven with known secret values (static, password, phone
/// code, email code (over SMTP with AUTH, to aiosmtpd) and webhook logins, a session's refresh, reuse and sign-out, a webhook user's move into the directory, the
/// webhook test route, admin tokens, key import and generation, token
/// profiles with their vendors' secrets and the tokens they mint, a
/// master-key reseal, and a failure of each), then everything the gateway wrote is
/// scanned for those values and their obvious encodings (base64, base64url,
/// hex, percent-encoding): its log at trace level, every audit row, every
/// error body, `/metrics` and the reseal command's output. No hit allowed.
@Suite struct SecretLeakScanTests {
    @Test func knownSecretsFedThroughEveryFlowNeverReachWhatTheGatewayWrites() async throws {
        // Every request is traced to a collector, whose exports are scanned with the rest.
        try await TracingTests.withReceiver { collector in
            let collectorURL = "http://127.0.0.1:\(collector.port)"
            // A tenant's user service that vouches for everyone, so webhook logins go out, sign, forward and migrate.
            try await FakeHTTPServer.with(answering: { _ in .init(body: #"{"valid":true}"#) }) { tenant, _ in
              try await SMTPSink.with { sink in
                try await TestDatabase.with(migrations: []) { client, url in
                    let bootstrap = AdminTokenSecret.generate().text
                    let masterKey = MasterKey.generateBase64()
                    var environment = serveEnvironment(url, bootstrap: bootstrap)
                    environment["GATEWAY_MASTER_KEY"] = masterKey
                    environment["GATEWAY_LOG_LEVEL"] = "trace"
                    environment["GATEWAY_LOG_FORMAT"] = "json"
                    environment["GATEWAY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = "true"
                    environment["GATEWAY_EMAIL_ALLOW_PRIVATE_ADDRESSES"] = "true"
                    environment["GATEWAY_EMAIL_SMTP_CA_FILE"] = sink.caFile
                    environment["GATEWAY_TRACING_ENDPOINT"] = collectorURL + "/v1/traces"
                    let server = try await GatewayProcess.start(["serve"], environment: environment)
                    let base = "http://127.0.0.1:\(server.port)"
                    let userPassword = "correct horse battery staple"
                    let staticPassword = "static-secret-password"
                    let webhookSecret = "webhook-secret-0123456789"
                    let credentialWebhookSecret = "credential-webhook-secret-0123"
                    let forwardedPassword = "forwarded tenant password 42"
                    let phoneCode = "73920561"
                    let pem = try await TestKeys.opensslPEM(format: "pkcs8")
                    let streamSecret = "stream-api-secret-0123456789"
                    let twilioSecret = "twilio-api-key-secret-0123456"
                    let serviceAccountPEM = try await TestKeys.opensslPEM(format: "pkcs8")
                    let profiles: [[String: any Sendable]] = [
                        ["type": "layer"], ["type": "stream", "api_key": "k", "api_secret": streamSecret],
                        [
                            "type": "twilio", "account_sid": "AC" + String(repeating: "0a", count: 16),
                            "api_key_sid": "SK" + String(repeating: "1b", count: 16), "api_key_secret": twilioSecret,
                            "chat_service_sid": "IS" + String(repeating: "2c", count: 16),
                        ],
                        [
                            "type": "firebase",
                            "service_account": [
                                "type": "service_account", "client_email": "leak@scan.iam.gserviceaccount.com", "private_key_id": "k1",
                                "private_key": serviceAccountPEM,
                            ],
                        ],
                    ]
                    let appID = UUID().lowercasedText
                    var errorBodies: [String] = []

                    func call(_ method: String, _ path: String, token: String? = nil, json: [String: any Sendable]? = nil) async throws
                        -> HTTPCall.Answer
                    {
                        let answer = try await HTTPCall.send(method, base + path, token: token, json: json)
                        if answer.status >= 400 { errorBodies.append(answer.text) }
                        return answer
                    }

                    let minted = try await call("POST", "/admin/v1/admin_tokens", token: bootstrap, json: ["name": "ops", "scope": "operator"])
                    #expect(minted.status == 201)
                    let adminToken = try #require(minted.json["token"] as? String)
                    let sender: [String: any Sendable] = ["type": "webhook", "url": "http://127.0.0.1:9/", "secret": webhookSecret]
                    let plugins: [String: any Sendable] = [
                        "static": ["users": [["user_id": "sam", "password": staticPassword]]],
                        "phone_code": [
                            "sender": sender, "code_length": 8,
                            "test_numbers": [["phone_number": "+15550000001", "code": phoneCode]],
                        ] as [String: any Sendable],
                        // A long timeout: the tenant answers from this test process, which a full run keeps busy.
                        "email_code": [
                            "from": "codes@gateway.example", "code_length": 8,
                            "sender": [
                                "type": "smtp", "host": "localhost", "port": sink.ports["starttls"]!, "username": "mailer",
                                "password": SMTPSink.password,
                            ] as [String: any Sendable],
                        ] as [String: any Sendable],
                        "webhook": ["url": tenant, "secret": credentialWebhookSecret, "migrate_on_success": "password", "timeout_ms": 10000] as [String: any Sendable],
                    ]
                    let created = try await call(
                        "POST", "/admin/v1/apps", token: adminToken,
                        json: [
                            "app_id": appID, "name": "secrets", "environment": "development", "provider_id": UUID().uuidString,
                            "credential_types": ["password", "static", "phone_code", "email_code", "webhook"], "plugins": plugins,
                            "token_profiles": profiles, "sessions": ["reuse_grace_seconds": 0],
                        ])
                    #expect(created.status == 201, "\(created.text)")
                    #expect(
                        !created.text.contains(webhookSecret) && !created.text.contains(staticPassword)
                            && !created.text.contains(credentialWebhookSecret) && !created.text.contains(streamSecret)
                            && !created.text.contains(twilioSecret) && !created.text.contains("PRIVATE KEY")
                            && !created.text.contains(SMTPSink.password), "secrets are write-only")
                    // A refused profile write, its secrets in hand.
                    let refusedProfiles = try await call(
                        "PATCH", "/admin/v1/apps/\(appID)", token: adminToken,
                        json: ["token_profiles": [["type": "stream", "api_key": "k", "api_secret": streamSecret, "lifetime_seconds": 1] as [String: any Sendable]]])
                    #expect(refusedProfiles.status == 400)
                    let key = try await call(
                        "POST", "/admin/v1/apps/\(appID)/keys", token: adminToken, json: ["key_id": UUID().uuidString, "private_key_pem": pem])
                    #expect(key.status == 201, "\(key.text)")
                    let generated = try await call("POST", "/admin/v1/apps/\(appID)/keys", token: adminToken, json: ["generate": [:] as [String: Int]])
                    #expect(generated.status == 201)
                    let weakKey = try await TestKeys.opensslPEM(format: "pkcs8", bits: 1024)
                    #expect(try await call("POST", "/admin/v1/apps/\(appID)/keys", token: adminToken, json: ["key_id": UUID().uuidString, "private_key_pem": weakKey]).status == 400)
                    let user = try await call("PUT", "/admin/v1/apps/\(appID)/users/ada", token: adminToken, json: ["password": userPassword, "email": "ada@example.com"])
                    #expect(user.status == 201)
                    #expect(try await call("PUT", "/admin/v1/apps/\(appID)/users/bo", token: adminToken, json: ["password": "short1"]).status == 400)
                    #expect(try await call("PUT", "/admin/v1/apps/\(appID)/phone_numbers/%2B15550000001", token: adminToken, json: ["user_id": "ada"]).status == 201)
                    #expect(try await call("GET", "/admin/v1/apps", token: "igw_" + String(repeating: "S", count: 43)).status == 401)

                    func token(_ credentials: [String: String], user: String?) async throws -> HTTPCall.Answer {
                        var body: [String: any Sendable] = ["app_id": appID, "nonce": "n-1", "credentials": credentials]
                        body["user_id"] = user
                        return try await call("POST", "/v1/identity_tokens", json: body)
                    }
                    let issued = try await token(["type": "password", "password": userPassword], user: "ada")
                    #expect(issued.status == 200)
                    let identityToken = try #require(issued.json["identity_token"] as? String)
                    // Sessions: a refresh, the spent token again (reuse: the session ends), a sign-out, an unknown token.
                    let spentRefreshToken = try #require(issued.json["refresh_token"] as? String)
                    let refreshed = try await token(["type": "refresh_token", "refresh_token": spentRefreshToken], user: nil)
                    #expect(refreshed.status == 200, "\(refreshed.text)")
                    let liveRefreshToken = try #require(refreshed.json["refresh_token"] as? String)
                    #expect(try await token(["type": "refresh_token", "refresh_token": spentRefreshToken], user: nil).status == 401)
                    let signedOut = try await call(
                        "POST", "/v1/sessions/revoke", json: ["app_id": appID, "refresh_token": liveRefreshToken])
                    #expect(signedOut.status == 204)
                    let unknownRefreshToken = RefreshToken.first(of: UUID()).text
                    #expect(try await token(["type": "refresh_token", "refresh_token": unknownRefreshToken], user: nil).status == 401)
                    let refreshTokenDigests = [spentRefreshToken, liveRefreshToken].compactMap { RefreshToken(text: $0)?.digest }
                    #expect(try await token(["type": "password", "password": userPassword + "!"], user: "ada").status == 401)
                    #expect(try await token(["type": "static", "password": staticPassword], user: "sam").status == 200)
                    #expect(try await token(["type": "static", "password": staticPassword + "!"], user: "sam").status == 401)
                    #expect(try await call("POST", "/v1/phone_codes", json: ["app_id": appID, "phone_number": "+15550000001"]).status == 202)
                    let wrongCode = String(phoneCode.reversed())
                    #expect(try await token(["type": "phone_code", "phone_number": "+15550000001", "code": wrongCode], user: nil).status == 401)
                    #expect(try await token(["type": "phone_code", "phone_number": "+15550000001", "code": phoneCode], user: nil).status == 200)
                    // An email code over SMTP with AUTH: read by the sink, tried wrong, then right.
                    #expect(try await call("POST", "/v1/email_codes", json: ["app_id": appID, "email": "ada@example.com"]).status == 202)
                    let mailed = try #require(try await sink.messages(atLeast: 1).first)
                    let emailCode = try #require(
                        (mailed["text"] as? String)?.split(whereSeparator: { !$0.isNumber }).map(String.init).first { $0.count == 8 })
                    let wrongEmailCode = String(emailCode.reversed()) == emailCode ? "00000000" : String(emailCode.reversed())
                    #expect(try await token(["type": "email_code", "email": "ada@example.com", "code": wrongEmailCode], user: nil).status == 401)
                    #expect(try await token(["type": "email_code", "email": "ada@example.com", "code": emailCode], user: nil).status == 200)
                    let validated = try await call("POST", "/v1/identity_tokens/validate", json: ["identity_token": identityToken])
                    #expect(validated.status == 200)
                    var profileTokens: [(String, String)] = []
                    for profile in ["stream", "twilio", "firebase"] {
                        let answer = try await call(
                            "POST", "/v1/identity_tokens",
                            json: [
                                "app_id": appID, "user_id": "ada", "nonce": "n-1", "token_profile": profile,
                                "credentials": ["type": "password", "password": userPassword],
                            ])
                        #expect(answer.status == 200, "\(profile): \(answer.text)")
                        let minted = try #require(answer.json["identity_token"] as? String)
                        profileTokens.append(("\(profile) token", minted))
                        let checked = try await call(
                            "POST", "/v1/identity_tokens/validate", json: ["identity_token": minted, "app_id": appID, "token_profile": profile])
                        #expect(checked.json["valid"] as? Bool == true, "\(profile): \(checked.text)")
                    }
                    // The webhook sender's port refuses: a failed delivery, with its secret in hand.
                    #expect(try await call("POST", "/v1/phone_codes", json: ["app_id": appID, "phone_number": "+4915112345678"]).status == 202)
                    // A webhook login: the secret signs, the password is forwarded, then hashed into the directory.
                    let webhookLogin = try await token(["type": "webhook", "password": forwardedPassword], user: "wendy")
                    #expect(webhookLogin.status == 200, "\(webhookLogin.text)")
                    let tested = try await call(
                        "POST", "/admin/v1/apps/\(appID)/webhook:test", token: adminToken,
                        json: ["user_id": "wendy", "credentials": ["password": forwardedPassword]])
                    // Private addresses are allowed here (the tenant is on loopback): the route says only ok or failed.
                    #expect(tested.json["outcome"] as? String == "ok", "\(tested.text)")
                    // The move runs in the server process after the answer: wait for its row, at most 15 s.
                    let moveDeadline = ContinuousClock.now + .seconds(15)
                    var moved = false
                    while !moved && ContinuousClock.now < moveDeadline {
                        let rows = try await client.query(
                            "SELECT 1 FROM password_users WHERE user_id = 'wendy'", logger: TestDatabase.logger)
                        for try await _ in rows { moved = true }
                        if !moved { try await Task.sleep(for: .milliseconds(50)) }  // polling another process's table
                    }
                    #expect(moved)
                    #expect(try await token(["type": "webhook", "password": forwardedPassword], user: "wendy").status == 200)
                    let metrics = try await HTTPCall.send("GET", base + "/metrics")
                    #expect(metrics.status == 200)
                    #expect(await server.stop() == 0)
                    let spans = try await HTTPCall.send("GET", collectorURL + "/raw").text
                    #expect(spans.contains("POST /v1/identity_tokens"), "the collector received no token request's span")

                    let newMasterKey = MasterKey.generateBase64()
                    let reseal = try await GatewayProcess.run(
                        ["reseal-keys"],
                        environment: ["GATEWAY_DATABASE_URL": url, "GATEWAY_MASTER_KEY": newMasterKey, "GATEWAY_MASTER_KEY_PREVIOUS": masterKey])
                    #expect(reseal.status == 0, "\(reseal.output)")

                    var auditRows: [String] = []
                    for try await row in try await client.query("SELECT to_json(e)::text FROM audit_events e", logger: TestDatabase.logger)
                        .decode(String.self)
                    {
                        auditRows.append(row)
                    }
                    #expect(auditRows.count >= 15)

                    let databasePassword = try #require(url.split(separator: "@").first?.split(separator: ":").last.map(String.init))
                    let pemLine = try #require(pem.split(separator: "\n").dropFirst().first.map(String.init))
                    let serviceAccountLine = try #require(serviceAccountPEM.split(separator: "\n").dropFirst().first.map(String.init))
                    let secrets: [(String, String)] = [
                        ("database password", databasePassword), ("master key", masterKey), ("new master key", newMasterKey),
                        ("bootstrap token", bootstrap), ("admin token", adminToken), ("private key", pemLine),
                        ("user password", userPassword), ("static password", staticPassword), ("webhook secret", webhookSecret),
                        ("credential webhook secret", credentialWebhookSecret), ("forwarded password", forwardedPassword),
                        ("phone code", phoneCode), ("wrong phone code", wrongCode), ("identity token", identityToken),
                        ("token signature", String(identityToken.split(separator: ".").last ?? "")),
                        ("stream secret", streamSecret), ("twilio secret", twilioSecret), ("service account key", serviceAccountLine),
                        ("refresh token", spentRefreshToken), ("refreshed token", liveRefreshToken),
                        ("unknown refresh token", unknownRefreshToken), ("email code", emailCode),
                        ("wrong email code", wrongEmailCode), ("SMTP password", SMTPSink.password),
                    ] + profileTokens
                        + refreshTokenDigests.map { ("refresh token digest", $0.map { String(format: "%02x", $0) }.joined()) }
                        + refreshTokenDigests.map { ("refresh token digest", Data($0).base64EncodedString()) }
                    let written: [(String, String)] = [
                        ("log", server.printed), ("/metrics", metrics.text), ("reseal output", reseal.output), ("exported spans", spans),
                    ]
                        + auditRows.map { ("audit row", $0) } + errorBodies.map { ("error body", $0) }
                    var hits: [String] = []
                    for (name, secret) in secrets {
                        for (encoding, form) in Self.encodings(of: secret) {
                            for (place, text) in written where text.contains(form) { hits.append("\(name) (\(encoding)) in \(place)") }
                        }
                    }
                    #expect(hits.isEmpty, "\(Set(hits).sorted())")
                    // Spans name no user and no phone number unless the operator turns user ids on.
                    #expect(!spans.contains("15550000001"), "the exported spans hold a phone number")
                    #expect(!spans.contains("wendy"), "the exported spans hold a user id")

                    let log = server.printed
                    var requestLines = 0
                    for line in log.split(separator: "\n") where line.hasPrefix("{") {
                        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                        #expect(object["time"] is String && object["level"] is String && object["message"] is String)
                        if object["message"] as? String == "request" {
                            requestLines += 1
                            #expect(object["route"] is String && object["status"] is String && object["duration_ms"] is String)
                            #expect(object["request_id"] is String)
                        }
                    }
                    #expect(requestLines >= 15)
                    #expect(log.contains(#""app_id":"layer:///apps/staging/\#(appID)""#) || log.contains(#""app_id":"\#(appID)""#))
                    let notJSON = log.split(separator: "\n").filter { !$0.hasPrefix("{") && !$0.isEmpty }
                    #expect(notJSON.isEmpty, "\(notJSON.prefix(3))")
                }
              }
            }
        }
    }

    /// The secret as written, and as base64, base64url, hex (both cases) and percent-encoding would write it.
    static func encodings(of secret: String) -> [(String, String)] {
        let bytes = Data(secret.utf8)
        let base64 = bytes.base64EncodedString()
        let base64URL = base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        var forms = [
            ("plain", secret), ("base64", base64.replacingOccurrences(of: "=", with: "")), ("base64url", base64URL),
            ("hex", hex), ("HEX", hex.uppercased()),
        ]
        if let percent = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), percent != secret {
            forms.append(("percent-encoded", percent))
            forms.append(("form-encoded", percent.replacingOccurrences(of: "%20", with: "+")))
        }
        return forms
    }
}
