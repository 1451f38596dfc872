import Foundation
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayTestSupport
import GatewayRuntime
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// Email codes end to end against PostgreSQL and real SMTP servers
/// (aiosmtpd), each message parsed by Python's `email` package.
@Suite struct EmailCodeDeliveryTests: ConcurrentAttack {
    /// The outbox rows of `app`, as (state, attempts, last reply), once none is queued (the worker has finished them).
    static func finishedOutbox(_ gateway: TestGateway, _ app: AppSettings) async throws -> [(String, Int, String?)] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let rows = try await gateway.client.query(
                "SELECT state, attempts, last_reply FROM outbox WHERE app_id = \(app.appID.uuid) ORDER BY created_at",
                logger: TestDatabase.logger)
            var found: [(String, Int, String?)] = []
            for try await row in rows.decode((String, Int, String?).self) { found.append(row) }
            if !found.isEmpty, found.allSatisfy({ $0.0 != "queued" }) || ContinuousClock.now > deadline { return found }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func aCodeTravelsOverSTARTTLSWithAuthAndBuysOneToken() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("starttls"))
                let sent = try await gateway.requestEmailCode(app, email: "ADA@example.com", locale: "de-CH")
                #expect(sent.status == .accepted, "\(text(sent))")
                #expect(try jsonObject(sent)["expires_in"] as? Int == 600)
                #expect(try jsonObject(sent)["resend_after"] as? Int == 60)

                let message = try #require(try await sink.messages(atLeast: 1).first)
                #expect(message["server"] as? String == "starttls")
                #expect(message["tls"] as? Bool == true)
                #expect(message["auth_user"] as? String == "mailer")
                #expect(message["rcpt_tos"] as? [String] == ["ADA@example.com"])
                #expect(message["mail_from"] as? String == "codes@gateway.example")
                #expect(message["content_type"] as? String == "multipart/alternative")
                #expect((message["defects"] as? [String])?.isEmpty == true, "\(message["defects"] ?? "")")
                let code = try #require(sentCode(in: message))
                // The German template, by the request's locale's language; the subject decoded from RFC 2047.
                #expect((message["subject"] as? String)?.hasPrefix("Ihr Code für Test app: \(code)") == true)
                #expect((message["html"] as? String)?.contains(code) == true)
                let rows = try await gateway.auditRows()
                #expect(rows.first { $0.event == "email_code.sent" }?.userID == "ada")
                let messageID = try #require(try await gateway.details(of: "email_code.sent").first?.detail["message_id"])
                #expect(message["message_id"] as? String == "<\(messageID)@gateway.example>")
                #expect(!rows.contains { $0.text.contains(code) }, "the code is in an audit row")

                let signedIn = try await gateway.signInByEmail(app, email: "ada@EXAMPLE.com", code: code)
                #expect(signedIn.status == .ok, "\(text(signedIn))")
                let token = try #require(identityToken(in: signedIn))
                #expect(ParsedIdentityToken(compact: token)?.claims["prn"] == .string("ada"))
                #expect(try await gateway.signInByEmail(app, code: code).status == .unauthorized)
                #expect(try await Self.finishedOutbox(gateway, app).map(\.0) == ["delivered"])
                let payloads = try await gateway.client.query(
                    "SELECT count(*)::int FROM outbox WHERE payload IS NOT NULL", logger: TestDatabase.logger)
                var kept = 0
                for try await count in payloads.decode(Int.self) { kept = count }
                #expect(kept == 0, "a delivered message keeps its payload")
            }
        }
    }

    /// What an operator checks before users get a code: the preview is the
    /// message the app's options make (its template, the sample code), and
    /// the test message reaches a real SMTP server (aiosmtpd) through the
    /// outbox, audited, its sample code signing nobody in.
    @Test func aPreviewAndATestMessageShowTheAppsEmailBeforeAnyUserGetsOne() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(
                    sender: sink.sender("starttls"), name: "Shop",
                    ["templates": .object(["pt-br": .object(["subject": .string("Código {code}"), "text": .string("Seu código: {code}")])])])
                let token = try await gateway.operatorToken()
                let base = "/admin/v1/apps/\(app.appID)/email_code"
                let preview = try await gateway.admin(.post, base + ":preview", token: token, json: ["locale": "pt-br"])
                #expect(preview.status == .ok, "\(text(preview))")
                let shown = try jsonObject(preview)
                #expect(shown["subject"] as? String == "Código 123456" && shown["text"] as? String == "Seu código: 123456")
                #expect((shown["html"] as? String)?.contains("123456") == true && shown["from"] as? String == "codes@gateway.example")
                let english = try jsonObject(try await gateway.admin(.post, base + ":preview", token: token, json: [:]))
                #expect(english["locale"] as? String == "en" && (english["subject"] as? String)?.contains("Shop") == true)
                let unknown = try await gateway.admin(.post, base + ":preview", token: token, json: ["locale": "xx"])
                #expect(unknown.status == .badRequest && text(unknown).contains("no template for 'xx'"), "\(text(unknown))")

                let queued = try await gateway.admin(.post, base + ":test_message", token: token, json: ["to": "ops@shop.example", "locale": "pt-br"])
                #expect(queued.status == .accepted, "\(text(queued))")
                let messageID = try #require(try jsonObject(queued)["message_id"] as? String)
                let message = try #require(try await sink.messages(atLeast: 1).first)
                #expect(message["rcpt_tos"] as? [String] == ["ops@shop.example"])
                #expect(message["subject"] as? String == "Código 123456" && message["message_id"] as? String == "<\(messageID)@gateway.example>")
                #expect((message["defects"] as? [String])?.isEmpty == true, "\(message["defects"] ?? "")")
                #expect(try await gateway.details(of: "admin.email.test_queued").first?.detail["message_id"] == messageID)
                #expect(try await gateway.signInByEmail(app, email: "ops@shop.example", code: "123456").status == .unauthorized)
                let bad = try await gateway.admin(.post, base + ":test_message", token: token, json: ["to": "not an address"])
                #expect(bad.status == .badRequest, "\(text(bad))")
            }
        }
    }

    /// Test messages are an admin's costly work: 40 asked at once by one
    /// token queue exactly the token's 30 a minute, each audited, the rest 429.
    @Test func testMessagesAtOnceQueueNoMoreThanTheAdminsWorkBudget() async throws {
        try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil)) { gateway in
            let app = try await gateway.createEmailApp(sender: .object(["type": .string("log")]))
            let token = try await gateway.operatorToken()
            let path = "/admin/v1/apps/\(app.appID)/email_code:test_message"
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        Int(try await gateway.admin(.post, path, token: token, json: ["to": "ops\(index)@shop.example"]).status.code)
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 202 }.count == 30, "\(statuses.sorted())")
            #expect(statuses.filter { $0 == 429 }.count == 10, "\(statuses.sorted())")
            #expect(try await gateway.details(of: "admin.email.test_queued").count == 30)
        }
    }

    @Test func anAppWithoutEmailCodesHasNoPreview() async throws {
        try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil)) { gateway in
            let app = try await gateway.createApp(activeKey: true) { _ in }
            let token = try await gateway.operatorToken()
            let answer = try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/email_code:preview", token: token, json: [:])
            let error = try jsonObject(answer)["error"] as? String
            #expect(answer.status == .conflict && error == "email_code_off", "\(text(answer))")
        }
    }

    @Test func implicitTLSOnItsOwnPortCarriesTheCodeToo() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("implicit", tls: "implicit"))
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let message = try #require(try await sink.messages(atLeast: 1).first)
                #expect(message["server"] as? String == "implicit")
                #expect(message["auth_user"] as? String == "mailer")
                let code = try #require(sentCode(in: message))
                #expect(try await gateway.signInByEmail(app, code: code).status == .ok)
            }
        }
    }

    @Test func anUnknownAddressIsAnsweredAlikeAndGetsNoMessage() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("starttls"))
                let unknown = try await gateway.requestEmailCode(app, email: "nobody@example.com")
                let known = try await gateway.requestEmailCode(app)
                #expect(unknown.status == .accepted)
                #expect(known.status == known.status)
                #expect(String(buffer: unknown.body) == String(buffer: known.body))
                #expect(Set(unknown.headers.map(\.name.canonicalName)) == Set(known.headers.map(\.name.canonicalName)))
                // The first message the servers get is the known address's: the unknown one was never queued.
                let messages = try await sink.messages(atLeast: 1)
                #expect(messages.map { $0["rcpt_tos"] as? [String] ?? [] } == [["ada@example.com"]])
                #expect(try await Self.finishedOutbox(gateway, app).count == 1)
                let unsent = try await gateway.details(of: "email_code.sent").first { $0.detail["email"] == "nobody@example.com" }
                #expect(unsent?.reason == "unknown_address")
                // Its unsent code cannot be guessed into a session either.
                #expect(try await gateway.signInByEmail(app, email: "nobody@example.com", code: "000000").status == .unauthorized)
            }
        }
    }

    @Test func aHostileAppNameAddsNoHeaderAndNoRecipient() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(
                    sender: sink.sender("starttls"), name: "Evil\r\nBcc: mallory@example.net\r\n\r\n.\r\nRCPT TO:<m@example.net>",
                    ["from_name": .string("Gateway \"codes\"")])
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let message = try #require(try await sink.messages(atLeast: 1).first)
                let names = (message["headers"] as? [[String]] ?? []).map { $0[0].lowercased() }
                #expect(names == ["from", "to", "subject", "date", "message-id", "mime-version", "auto-submitted", "content-type"])
                #expect(message["rcpt_tos"] as? [String] == ["ada@example.com"])
                #expect(message["from"] as? String == "\"Gateway \\\"codes\\\"\" <codes@gateway.example>")
            }
        }
    }

    @Test func requiredTLSThatTheServerDoesNotOfferSendsNothing() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("plain", credentials: false))
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let outbox = try await Self.finishedOutbox(gateway, app)
                #expect(outbox.map(\.0) == ["failed"])
                #expect(outbox.first?.1 == 1, "a server without STARTTLS is not asked again")
                #expect(outbox.first?.2?.contains("STARTTLS") == true, "\(outbox)")
                #expect(try await gateway.auditRows().contains { $0.event == "email_code.delivery_failed" })
                #expect(try await sink.messages(atLeast: 0).isEmpty)
            }
        }
    }

    @Test func aCertificateNotTrustedSendsNothing() async throws {
        try await SMTPSink.with { sink in
            // The gateway does not know the sink's CA.
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("starttls"))
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let outbox = try await Self.finishedOutbox(gateway, app)
                #expect(outbox.map(\.0) == ["failed"], "\(outbox)")
                #expect(try await sink.messages(atLeast: 0).isEmpty)
            }
        }
    }

    @Test func a550IsFailedAndNotRetried() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("refusing", tls: "none", credentials: false))
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let outbox = try await Self.finishedOutbox(gateway, app)
                #expect(outbox.map(\.0) == ["failed"])
                #expect(outbox.first?.1 == 1)
                #expect(outbox.first?.2?.contains("550") == true, "\(outbox)")
            }
        }
    }

    @Test func aServerThatStallsInDataIsTimedOutRetriedAndGetsTheMessageOnce() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("stalling", tls: "none", credentials: false))
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let outbox = try await Self.finishedOutbox(gateway, app)
                #expect(outbox.map(\.0) == ["delivered"], "\(outbox)")
                #expect(outbox.first?.1 == 2)
                let messages = try await sink.messages(atLeast: 1)
                #expect(messages.count == 1)
                let retried = try await gateway.details(of: "email_code.delivery_retrying")
                #expect(retried.first?.detail["reply"]?.contains("timeout") == true, "\(retried)")
                #expect(Set(messages.compactMap { $0["message_id"] as? String }).count == 1)
            }
        }
    }

    @Test func manySendsForOneAddressOnTwoReplicasQueueOneMessage() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("starttls"))
                try await gateway.withReplica { replica in
                    let statuses = try await statuses(on: [gateway, replica], paths: ["/v1/email_codes"]) { _ in
                        ["app_id": app.appID.uuid.uuidString, "email": "ada@example.com"]
                    }
                    #expect(statuses.filter { $0 == 202 }.count == 1, "\(statuses)")
                    #expect(statuses.allSatisfy { $0 == 202 || $0 == 429 })
                }
                #expect(try await Self.finishedOutbox(gateway, app).map(\.0) == ["delivered"])
                #expect(try await sink.messages(atLeast: 1).count == 1)
            }
        }
    }

    @Test func oneCodeOnTwoReplicasAtOnceBuysOneToken() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("starttls"))
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let first = try #require(try await sink.messages(atLeast: 1).first)
                let code = try #require(sentCode(in: first))
                try await gateway.withReplica { replica in
                    let statuses = try await statuses(on: [gateway, replica]) { _ in
                        [
                            "app_id": app.appID.uuid.uuidString, "nonce": "n-\(UUID())",
                            "credentials": ["type": "email_code", "email": "ada@example.com", "code": code],
                        ]
                    }
                    #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
                }
            }
        }
    }

    @Test func aCodeAfterItsAttemptsIsDeadEvenWhenRight() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile)) { gateway in
                let app = try await gateway.createEmailApp(sender: sink.sender("starttls"), ["max_attempts": .number(2)])
                #expect(try await gateway.requestEmailCode(app).status == .accepted)
                let first = try #require(try await sink.messages(atLeast: 1).first)
                let code = try #require(sentCode(in: first))
                let wrong = code == "999999" ? "999998" : "999999"
                #expect(try await gateway.signInByEmail(app, code: wrong).status == .unauthorized)
                #expect(try await gateway.signInByEmail(app, code: wrong).status == .unauthorized)
                #expect(try await gateway.signInByEmail(app, code: code).status == .unauthorized)
            }
        }
    }

    @Test(arguments: ["DELETE", "PATCH disabled"])
    func deletingOrDisablingAUserCancelsTheMessagesQueuedForThem(_ change: String) async throws {
        // The first attempt fails (nothing listens on port 9) and the next waits ten minutes: the message stays queued.
        try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil, firstPause: .seconds(600))) { gateway in
            let app = try await gateway.createEmailApp(
                sender: .object(["type": .string("smtp"), "host": .string("127.0.0.1"), "port": .number(9), "tls": .string("none")]))
            #expect(try await gateway.requestEmailCode(app).status == .accepted)
            let deadline = ContinuousClock.now + .seconds(30)
            var waiting = false
            while !waiting && ContinuousClock.now < deadline {
                let rows = try await gateway.client.query(
                    "SELECT 1 FROM outbox WHERE state = 'queued' AND attempts = 1 AND leased_until IS NULL", logger: TestDatabase.logger)
                for try await _ in rows { waiting = true }
                if !waiting { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(waiting, "the first attempt did not end")
            let path = "/admin/v1/apps/\(app.appID)/users/ada"
            let token = try await gateway.operatorToken()
            let changed =
                change == "DELETE"
                ? try await gateway.admin(.delete, path, token: token, json: nil)
                : try await gateway.admin(.patch, path, token: token, json: ["disabled": true])
            #expect([.noContent, .ok].contains(changed.status), "\(text(changed))")
            let outbox = try await Self.finishedOutbox(gateway, app)
            #expect(outbox.map(\.0) == ["failed"])
            #expect(outbox.first?.2 == "email_code.messages_cancelled")
            let cancelled = try await gateway.details(of: "email_code.messages_cancelled")
            #expect(cancelled.map(\.detail["reason"]) == [change == "DELETE" ? "user_deleted" : "user_disabled"])
        }
    }
}
