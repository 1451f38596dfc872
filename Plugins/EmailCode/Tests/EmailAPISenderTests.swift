import Crypto
import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayOutbound
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// The senders that call an email API: Amazon SES v2, judged by moto (which
/// recomputes every SigV4 signature) with boto3 and Python's `email`
/// package reading what it accepted, and the app's own signed endpoint.
@Suite struct EmailAPISenderTests {
    /// A code requested for an app whose sender is SES reaches moto as
    /// one raw MIME message from the verified sender, signed so that moto
    /// accepts it, and buys one token.
    @Test func sesCarriesTheCodeSignedWithTheAppsKey() async throws {
        try await SESServer.with { ses in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil)) { gateway in
                let app = try await gateway.createEmailApp(sender: ses.sender(), ["from": .string(ses.from)])
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let received = try await ses.messages(atLeast: 1)
                let message = try #require(received.messages.first)
                #expect(received.messages.count == 1)
                #expect(message["source"] as? String == ses.from)
                #expect((message["destinations"] as? [String])?.contains("ada@example.com") == true, "\(message)")
                #expect(received.sentByBoto3 == (message["destinations"] as? [String])?.count, "boto3 counts what moto accepted")
                let code = try #require(sentCode(in: message), "\(message)")
                #expect((message["subject"] as? String)?.hasPrefix("Your Test app code: \(code)") == true, "\(message)")
                let messageID = try #require(try await gateway.details(of: "email_code.sent").first?.detail["message_id"])
                #expect((message["message_id"] as? String)?.hasPrefix("<\(messageID)@") == true, "\(message)")

                let outbox = try await EmailCodeDeliveryTests.finishedOutbox(gateway, app)
                #expect(outbox.map(\.0) == ["delivered"] && outbox.first?.2?.hasPrefix("SES message ") == true, "\(outbox)")
                #expect(try await gateway.signInByEmail(app, code: code).status == .ok)
                let rows = try await gateway.auditRows()
                #expect(!rows.contains { $0.text.contains(ses.secretAccessKey) }, "the secret key is in an audit row")
                let shown = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: try await gateway.operatorToken())
                #expect(!text(shown).contains(ses.secretAccessKey) && text(shown).contains(#""secret_access_key":"********""#), "\(text(shown))")
            }
        }
    }

    /// With a secret that is not the key's, moto refuses the signature
    /// (403 `SignatureDoesNotMatch`): nothing is sent, the message is
    /// given up at once with AWS's reason, and the app's admin reads it.
    @Test func sesRefusingTheSignatureFailsTheMessageWithItsReason() async throws {
        try await SESServer.with { ses in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil)) { gateway in
                let app = try await gateway.createEmailApp(
                    sender: ses.sender(secretAccessKey: String(repeating: "k", count: 40)), ["from": .string(ses.from)])
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let outbox = try await EmailCodeDeliveryTests.finishedOutbox(gateway, app)
                #expect(outbox.map(\.0) == ["failed"] && outbox.first?.1 == 1, "\(outbox)")
                #expect(outbox.first?.2?.hasPrefix("HTTP 403 SignatureDoesNotMatch: ") == true, "\(outbox)")
                #expect(try await ses.messages(atLeast: 0).messages.isEmpty)
            }
        }
    }

    /// The `http` sender posts the message to the app's endpoint, signed
    /// as the SMS webhook is; a 503 is tried again, a 400 is given up.
    @Test func anAppsOwnEndpointGetsTheSignedMessageRetriedAfterA503() async throws {
        try await FakeHTTPServer.with(statuses: [503, 200, 400]) { base, endpoint in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil)) { gateway in
                let secret = "whsec-email-0123456789"
                let sender: JSONValue = .object([
                    "type": .string("http"), "url": .string(base + "/mail"), "secret": .string(secret), "timeout_seconds": .number(5),
                ])
                let app = try await gateway.createEmailApp(sender: sender)
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let outbox = try await EmailCodeDeliveryTests.finishedOutbox(gateway, app)
                #expect(outbox.map(\.0) == ["delivered"] && outbox.first?.1 == 2, "one 503, then delivered: \(outbox)")
                let requests = endpoint.requests
                #expect(requests.count == 2 && requests.allSatisfy { $0.path == "/mail" && $0.method == "POST" })
                let request = try #require(requests.last)
                let timestamp = try #require(request.headers["x-gateway-timestamp"])
                #expect(
                    request.headers["x-gateway-signature"]
                        == "v1=" + WebhookSignature.signature(secret: secret, timestamp: timestamp, body: Array(request.body.utf8)))
                let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
                #expect(body["app_id"] as? String == app.appID.uuid.lowercasedText && body["to"] as? String == "ada@example.com")
                #expect(body["from"] as? String == "codes@gateway.example")
                let mime = String(decoding: Data(base64Encoded: body["mime"] as? String ?? "") ?? Data(), as: UTF8.self)
                let messageID = try #require(body["message_id"] as? String)
                #expect(mime.contains("Message-ID: <\(messageID)@"), "\(mime.prefix(400))")
                let code = try #require((body["text"] as? String)?.firstMatch(of: /\b\d{6}\b/).map { String($0.output) })
                #expect(try await gateway.signInByEmail(app, code: code).status == .ok)

                // The next answer is a 400: given up at its first attempt.
                // Past the resend delay: the code was spent, and the next is asked for a minute on.
                try await gateway.client.query(
                    "UPDATE email_codes SET sent_at = now() - interval '1 hour' WHERE app_id = \(app.appID.uuid)",
                    logger: TestDatabase.logger)
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let second = try await EmailCodeDeliveryTests.finishedOutbox(gateway, app)
                #expect(second.map(\.0).sorted() == ["delivered", "failed"], "\(second)")
                #expect(second.contains { $0.0 == "failed" && $0.1 == 1 && $0.2 == "HTTP 400" }, "the status alone: \(second)")
            }
        }
    }

    /// Settings a sender must refuse, each with the field it names.
    @Test(arguments: [
        (["type": "ses", "region": "moon-1", "access_key_id": "AKIAEXAMPLE123456", "secret_access_key": "s3cr3t-0123456789"], "region"),
        (["type": "ses", "region": "eu-west-1", "access_key_id": "akia-lower", "secret_access_key": "s3cr3t-0123456789"], "access_key_id"),
        (["type": "ses", "region": "eu-west-1", "access_key_id": "AKIAEXAMPLE123456", "secret_access_key": "short"], "secret_access_key"),
        (["type": "ses", "region": "eu-west-1", "access_key_id": "AKIAEXAMPLE123456", "secret_access_key": "s3cr3t-0123456789",
          "endpoint": "http://10.0.0.5/"], "endpoint"),
        (["type": "http", "url": "http://169.254.169.254/latest", "secret": "whsec-0123456789abcdef"], "url"),
        (["type": "http", "url": "https://mail.example/hook", "secret": "short"], "secret"),
    ])
    func refusedSettingsNameTheirField(_ sender: [String: String], field: String) throws {
        let options: JSONValue = .object([
            "from": .string("codes@gateway.example"), "sender": .object(sender.mapValues { .string($0) }),
        ])
        #expect {
            try EmailCodeOptions(options, environment: .production)
        } throws: { error in
            (error as? GatewayError)?.message.contains("plugins.email_code.sender.\(field)") == true
        }
    }
}

extension SESServer {
    /// An app's `plugins.email_code.sender` calling this server, with its key (or another secret).
    func sender(secretAccessKey: String? = nil) -> JSONValue {
        .object([
            "type": .string("ses"), "region": .string(region), "access_key_id": .string(accessKeyID),
            "secret_access_key": .string(secretAccessKey ?? self.secretAccessKey), "endpoint": .string(endpoint),
            "timeout_seconds": .number(5),
        ])
    }
}
