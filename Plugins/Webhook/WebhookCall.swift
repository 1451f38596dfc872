import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayOutbound
import Logging
import NIOCore

/// One question to the tenant's user service: is this user's credential
/// right? Posts `{app_id, user_id, credentials, request_id, timestamp}`
/// signed (``WebhookSignature``), and reads the answer strictly:
/// `{"valid": true, "user_id"?, "first_name"?, "last_name"?, "display_name"?, "avatar_url"?}` (the profile fields)
/// or `{"valid": false}`. Anything else is a ``WebhookFailure``.
struct WebhookCall: Sendable {
    /// The largest answer read; a larger one is a failure.
    static let maximumAnswerBytes = 16 * 1024

    let outbound: OutboundHTTP
    let logger: Logger

    enum Answer: Sendable, Equatable {
        case valid(VerifiedIdentity)
        case invalid
    }

    struct Question: Sendable {
        let appID: AppID
        let userID: String
        let fields: [String: String]
        let requestID: String
    }

    func ask(_ question: Question, options: WebhookOptions, now: Date = Date()) async throws(WebhookFailure) -> Answer {
        let body = Self.body(question, now: now)
        let response: OutboundResponse
        do {
            response = try await outbound.post(
                options.url, for: question.appID.uuid.lowercasedText, headers: WebhookSignature.headers(for: body, secret: options.secret, now: now),
                body: ByteBuffer(bytes: body), timeout: options.timeout, maximumAnswerBytes: Self.maximumAnswerBytes,
                logger: logger)
        } catch {
            throw WebhookFailure(error)
        }
        switch response.status {
        case 200..<300: return try Self.answer(Array(buffer: response.body), asked: question.userID, logger: logger)
        case 300..<400: throw WebhookFailure(.redirect, "the service answered \(response.status); redirects are not followed")
        default:
            throw WebhookFailure(.badStatus, "the service answered HTTP \(response.status)", serviceFault: response.status >= 500)
        }
    }

    private struct Body: Encodable {
        let app_id: String
        let user_id: String
        let credentials: [String: String]
        let request_id: String
        let timestamp: Int
    }

    static func body(_ question: Question, now: Date) -> [UInt8] {
        let body = Body(
            app_id: question.appID.uuid.lowercasedText, user_id: question.userID, credentials: question.fields,
            request_id: question.requestID, timestamp: Int(now.timeIntervalSince1970))
        return (try? JSONCoding.bytes(of: body)) ?? []
    }

    /// The tenant's answer; members other than these are ignored, so the tenant may add its own.
    static func answer(_ bytes: [UInt8], asked userID: String, logger: Logger) throws(WebhookFailure) -> Answer {
        do throws(GatewayError) {
            let reader = try JSONInput.parse(bytes, subject: "answer")
            guard let valid = try reader.bool("valid") else {
                throw GatewayError.invalidRequest("answer.valid must be true or false.")
            }
            guard valid else { return .invalid }
            // The token request's rule: the id goes into the token and the audit trail.
            let user = try TokenRequest.validatedUserID(try reader.string("user_id") ?? userID, field: "answer.user_id")
            return .valid(VerifiedIdentity(userID: user, profile: try UserProfile.read(reader, at: "answer")))
        } catch {
            throw WebhookFailure(.badAnswer, "the answer is not one the gateway reads: \(error.message)")
        }
    }
}

/// Why the tenant's service gave no verdict: the audit reason, and a line for the log.
struct WebhookFailure: Error, Sendable, CustomStringConvertible {
    enum Reason: String, Sendable {
        case addressRefused = "webhook_address_refused"
        case timedOut = "webhook_timeout"
        case noAnswer = "webhook_no_answer"
        case badStatus = "webhook_bad_status"
        case redirect = "webhook_redirect"
        case badAnswer = "webhook_bad_answer"
        case answerTooLarge = "webhook_answer_too_large"
        case circuitOpen = "webhook_circuit_open"
    }

    let reason: Reason
    let detail: String
    /// Whether the service itself is failing (no connection, no answer in
    /// time, a 5xx), which is what the circuit breaker counts. An answer the
    /// service chose (a 4xx, a redirect, a body the gateway cannot read) may
    /// be the client's doing, such as credentials too large for the service,
    /// and must not let one client open the breaker for everyone.
    let isServiceFault: Bool

    init(_ reason: Reason, _ detail: String, serviceFault: Bool? = nil) {
        self.reason = reason
        self.detail = detail
        self.isServiceFault = serviceFault ?? [.timedOut, .noAnswer].contains(reason)
    }

    init(_ failure: OutboundFailure) {
        switch failure.kind {
        case .addressRefused: self.init(.addressRefused, failure.reason)
        case .timedOut: self.init(.timedOut, failure.reason)
        case .noAnswer: self.init(.noAnswer, failure.reason)
        case .answerTooLarge: self.init(.answerTooLarge, failure.reason)
        }
    }

    var description: String { "\(reason.rawValue): \(detail)" }
}
