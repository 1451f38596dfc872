import Foundation
import IdentityGatewayClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How each answer the gateway documents becomes a typed error, over a
/// transport that answers what it is given (the integration tests get the
/// same answers from the gateway itself).
@Suite struct RefusalMappingTests {
    struct Canned: HTTPTransport {
        let status: Int
        let body: String
        let headers: [String: String]

        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
            return (Data(body.utf8), response)
        }
    }

    static func error(_ code: String, _ status: Int) -> String {
        #"{"error":"\#(code)","message":"m","status":\#(status),"request_id":"r"}"#
    }

    static let cases: [(Int, String, [String: String], IdentityGatewayError)] = [
        (401, error("invalid_credentials", 401), [:], .invalidCredentials),
        (429, error("rate_limited", 429), ["Retry-After": "7"], .rateLimited(retryAfter: .seconds(7))),
        (403, error("app_disabled", 403), [:], .appDisabled),
        (403, error("email_unverified", 403), [:], .emailUnverified),
        (403, error("step_up_required", 403), [:], .stepUpRequired),
        (409, error("email_taken", 409), [:], .emailTaken),
        (503, error("busy", 503), ["Retry-After": "1"], .unavailable(code: "busy", retryAfter: .seconds(1))),
        (502, error("credential_service_unavailable", 502), [:], .unavailable(code: "credential_service_unavailable", retryAfter: nil)),
        (404, error("unknown_app", 404), [:], .refused(code: "unknown_app", message: "m")),
        (502, "<html>bad gateway</html>", [:], .unavailable(code: "http_502", retryAfter: nil)),
        (200, "not json", [:], .unexpectedAnswer("")),
    ]

    @Test(arguments: cases.indices)
    func eachAnswerIsItsTypedError(_ index: Int) async throws {
        let (status, body, headers, expected) = Self.cases[index]
        let client = GatewayClient(
            configuration: GatewayClientConfiguration(gatewayURL: URL(string: "http://gateway.test")!, appID: "app"),
            store: MemorySessionStore(), transport: Canned(status: status, body: body, headers: headers))
        do {
            _ = try await client.signIn(userID: "alice", credential: .password("p"), nonce: "n")
            Issue.record("answer \(status) signed in")
        } catch {
            if case .unexpectedAnswer = expected, case .unexpectedAnswer = error { return }
            #expect(error == expected, "answer \(status) \(body)")
        }
    }

    @Test func anMFAChallengeIsAValueNotAnError() async throws {
        let body = #"{"error":"mfa_required","message":"m","status":403,"request_id":"r","mfa_ticket":"mt1.x","mfa_ticket_expires_in":300,"mfa_methods":["totp","recovery_code"]}"#
        let client = GatewayClient(
            configuration: GatewayClientConfiguration(gatewayURL: URL(string: "http://gateway.test")!, appID: "app"),
            store: MemorySessionStore(), transport: Canned(status: 403, body: body, headers: [:]))
        guard case .secondFactorRequired(let challenge) = try await client.signIn(userID: "alice", credential: .password("p"), nonce: "n1")
        else {
            Issue.record("no challenge")
            return
        }
        #expect(challenge.ticket == "mt1.x")
        #expect(challenge.expiresIn == .seconds(300))
        #expect(challenge.methods == ["totp", "recovery_code"])
        #expect(challenge.nonce == "n1")
        #expect(!challenge.needsEnrollment)
    }
}
