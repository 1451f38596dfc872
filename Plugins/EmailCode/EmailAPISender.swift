import Foundation
import GatewayCore
import GatewayCourier
import GatewayOutbound
import Logging
import NIOCore

/// Hands a queued message to an email API over HTTP(S), under the
/// gateway's outbound rules (``OutboundHTTP``: allowed addresses only, no
/// redirect, a bounded answer, connections kept): Amazon SES v2's
/// `SendEmail` (`POST /v2/email/outbound-emails`, the message as raw MIME,
/// signed with SigV4 under the app's access key), or the app's own
/// endpoint (the message as JSON, signed as the SMS webhook is). One
/// attempt per call: the outbox retries.
///
/// What an answer comes to: 2xx delivered; 408, 429, 5xx or no answer
/// worth another attempt; any other status (a rejected message, a wrong
/// key or signature) given up, its reply kept for the audit row: the
/// status, and for SES AWS's error type and message, never a body that
/// could echo the message.
struct EmailAPISender: Sendable {
    static let maximumAnswerBytes = 64 * 1024
    static let sesPath = "/v2/email/outbound-emails"

    let outbound: OutboundHTTP
    let logger: Logger

    func send(
        _ payload: EmailOutboxPayload, messageID: UUID, appID: AppID, via settings: EmailCodeOptions.SESSettings, now: Date = Date()
    ) async -> DeliveryResult {
        var request = SESRequest(
            FromEmailAddress: payload.sender, Destination: .init(ToAddresses: [payload.recipient]),
            Content: .init(Raw: .init(Data: Data(payload.message).base64EncodedString())))
        request.ConfigurationSetName = settings.configurationSet
        let body = (try? JSONCoding.bytes(of: request)) ?? []
        let url = settings.endpoint.appending(path: Self.sesPath)
        let signature = AWSSignatureV4(
            accessKeyID: settings.accessKeyID, secretAccessKey: settings.secretAccessKey, region: settings.region, service: "ses")
        let headers = signature.headers(method: "POST", url: url, contentType: "application/json", body: body, now: now)
        return await post(body, headers: headers, to: url, for: appID, timeout: settings.timeout, refused: Self.reply) { answer in
            (try? JSONCoding.decode(SESAnswer.self, from: answer.body.readableBytesView)).map { "SES message \($0.MessageId)" }
                ?? "SES \(answer.status)"
        }
    }

    /// `{message_id, app_id, from, to, text, mime}` (`mime`: the whole
    /// RFC 5322 message, base64), signed (``WebhookSignature``).
    func send(
        _ payload: EmailOutboxPayload, messageID: UUID, appID: AppID, to url: URL, secret: String, timeout: Duration,
        now: Date = Date()
    ) async -> DeliveryResult {
        let message = WebhookMessage(
            message_id: messageID.uuidString.lowercased(), app_id: appID.uuid.lowercasedText, from: payload.sender,
            to: payload.recipient, text: payload.text, mime: Data(payload.message).base64EncodedString())
        let body = (try? JSONCoding.bytes(of: message)) ?? []
        let headers = WebhookSignature.headers(for: body, secret: secret, now: now)
        // The status alone, as for SMS webhooks: an endpoint that echoes what it got would put the code in the trail.
        return await post(body, headers: headers, to: url, for: appID, timeout: timeout, refused: { "HTTP \($0.status)" }) {
            "HTTP \($0.status)"
        }
    }

    private func post(
        _ body: [UInt8], headers: [(name: String, value: String)], to url: URL, for appID: AppID, timeout: Duration,
        refused: (OutboundResponse) -> String, delivered: (OutboundResponse) -> String
    ) async -> DeliveryResult {
        let answer: OutboundResponse
        do {
            answer = try await outbound.post(
                url, for: appID.uuid.lowercasedText, headers: headers, body: ByteBuffer(bytes: body), timeout: timeout,
                maximumAnswerBytes: Self.maximumAnswerBytes, logger: logger)
        } catch {
            switch error.kind {
            case .addressRefused: return .permanent(reply: error.reason)
            case .noAnswer, .timedOut: return .transient(reply: "no answer")
            case .answerTooLarge: return .transient(reply: "answer too large")
            }
        }
        if (200..<300).contains(answer.status) { return .delivered(reply: delivered(answer)) }
        let reply = refused(answer)
        return answer.status == 408 || answer.status == 429 || answer.status >= 500
            ? .transient(reply: reply) : .permanent(reply: reply)
    }

    /// The status and what AWS says of its error, in one short line: its
    /// error type (the `x-amzn-ErrorType` header, or the `<Code>` of an XML
    /// error) and message; never the rest of the body, which might echo
    /// what was sent (the code).
    static func reply(_ answer: OutboundResponse) -> String {
        let body = String(decoding: answer.body.readableBytesView.prefix(4096), as: UTF8.self)
        let type = answer.headers["x-amzn-errortype"].map { String($0.prefix { $0 != ":" }) } ?? Self.element("Code", in: body)
        let kind = type.map { " " + $0 } ?? ""
        let said =
            (try? JSONCoding.decode(ErrorAnswer.self, from: answer.body.readableBytesView)).flatMap { $0.message ?? $0.Message }
            ?? Self.element("Message", in: body) ?? "no message"
        let line = "HTTP \(answer.status)\(kind): \(said)".map { $0.isNewline || $0.asciiValue.map { $0 < 32 } == true ? " " : $0 }
        return String(String(line).prefix(300))
    }

    /// The text of the first `<name>` element in `xml`, if any.
    static func element(_ name: String, in xml: String) -> String? {
        guard let start = xml.range(of: "<\(name)>"), let end = xml.range(of: "</\(name)>", range: start.upperBound..<xml.endIndex)
        else { return nil }
        return String(xml[start.upperBound..<end.lowerBound])
    }

    // The shapes of SES v2's request and answers (its own capitalised names).

    struct SESRequest: Encodable {
        struct Destination: Encodable { let ToAddresses: [String] }
        struct Raw: Encodable { let Data: String }
        struct Content: Encodable { let Raw: Raw }
        let FromEmailAddress: String
        let Destination: Destination
        let Content: Content
        var ConfigurationSetName: String?
    }

    struct SESAnswer: Decodable { let MessageId: String }

    struct ErrorAnswer: Decodable {
        let message: String?
        let Message: String?
    }

    struct WebhookMessage: Encodable {
        let message_id: String
        let app_id: String
        let from: String
        let to: String
        let text: String
        let mime: String
    }
}
