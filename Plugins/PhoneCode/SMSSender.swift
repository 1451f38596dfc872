import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayOutbound
import Logging
import NIOCore
import Tracing

/// One code to deliver.
struct SMSMessage: Sendable {
    let appID: AppID
    let phoneNumber: PhoneNumber
    let code: String
    let expiresIn: Int
}

/// Why a delivery failed, for the audit row and the log; never shown to the client.
struct SMSDeliveryFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Delivers codes through the app's sender: the tenant's webhook, Twilio's
/// Messages API, or (development apps only) the server log. Each HTTP
/// attempt has 5 s; a 5xx answer or a connection failure is retried once.
///
/// Calls go out under the gateway's outbound rules (``OutboundHTTP``): only
/// to addresses the policy allows, no redirect followed (a sender that
/// answers 3xx has failed), a bounded answer, connections reused. Every
/// connection-level failure reads the same, so the audit trail an app admin
/// sees cannot tell a closed port from a slow one. After the app's
/// `circuit_breaker.failures` failed deliveries in a row (5 unless set),
/// its sends fail at once for the cool-down (``CircuitBreaker``), then one
/// trial decides.
struct SMSSender: Sendable {
    static let attempts = 2
    /// The pause before the one retry.
    static let backoff = Backoff.constant(.milliseconds(200))
    static let maximumAnswerBytes = 64 * 1024

    let outbound: OutboundHTTP
    let breaker: CircuitBreaker<AppID>
    /// What one HTTP attempt may take, from the name lookup to the answer's last byte.
    let attemptTimeout: Duration
    let logger: Logger

    init(
        addresses: OutboundAddressPolicy, breaker: CircuitBreaker<AppID> = CircuitBreaker(), attemptTimeout: Duration = .seconds(5),
        logger: Logger
    ) {
        self.outbound = OutboundHTTP(addresses: addresses)
        self.breaker = breaker
        self.attemptTimeout = attemptTimeout
        self.logger = logger
    }

    /// Delivers the code; in a traced request, as an `sms delivery` span over its attempts (each a client span).
    func send(
        _ message: SMSMessage, via sender: PhoneCodeOptions.Sender, breaking settings: CircuitBreaker<AppID>.Settings = .standard
    ) async throws(SMSDeliveryFailure) {
        let span = Spans.start("sms delivery", attributes: ["gateway.sms.sender": .string(sender.kind)])
        defer { span?.end() }
        if case .log = sender { return try await deliver(message, via: sender) }
        guard breaker.permits(message.appID) else {
            span?.attributes["error.type"] = "circuit_open"
            throw SMSDeliveryFailure(reason: "circuit open: \(settings.failures) failed deliveries in a row")
        }
        do {
            try await deliver(message, via: sender)
            breaker.recordSuccess(message.appID)
        } catch {
            breaker.recordFailure(message.appID, settings)
            Spans.fail(span, error)
            throw error
        }
    }

    private func deliver(_ message: SMSMessage, via sender: PhoneCodeOptions.Sender) async throws(SMSDeliveryFailure) {
        switch sender {
        case .log:
            // The one place a code may appear in a log line: development apps only.
            logger.notice(
                "phone code (log sender, development app)",
                metadata: ["app_id": "\(message.appID)", "phone_number": "\(message.phoneNumber)", "code": "\(message.code)"])
        case .webhook(let url, let secret):
            let (headers, body) = Self.webhookRequest(message, secret: secret, now: Date())
            try await deliver(body, headers: headers, to: url, for: message.appID)
        case .twilio(let accountSID, let authToken, let from, let text, let baseURL):
            let url = baseURL.appending(path: "2010-04-01/Accounts/\(accountSID)/Messages.json")
            let credentials = Data("\(accountSID):\(authToken)".utf8).base64EncodedString()
            let body = FormBody.encode([
                ("To", message.phoneNumber.text), ("From", from), ("Body", text.replacingOccurrences(of: "{code}", with: message.code)),
            ])
            try await deliver(
                ByteBuffer(string: body),
                headers: [("Authorization", "Basic \(credentials)"), ("Content-Type", FormBody.contentType)],
                to: url, for: message.appID)
        }
    }

    /// The headers and body of a webhook delivery: `{app_id, phone_number, code, expires_in}`, signed (``WebhookSignature``).
    static func webhookRequest(
        _ message: SMSMessage, secret: String, now: Date
    ) -> (headers: [(name: String, value: String)], body: ByteBuffer) {
        let body = Array(
            #"{"app_id":"\#(message.appID.uuid.lowercasedText)","phone_number":"\#(message.phoneNumber)","code":"\#(message.code)","expires_in":\#(message.expiresIn)}"#
                .utf8)
        return (WebhookSignature.headers(for: body, secret: secret, now: now), ByteBuffer(bytes: body))
    }

    /// Posts `body` to `url`, retrying once after a 5xx or no answer.
    private func deliver(
        _ body: ByteBuffer, headers: [(name: String, value: String)], to url: URL, for appID: AppID
    ) async throws(SMSDeliveryFailure) {
        var lastFailure = SMSDeliveryFailure(reason: "not attempted")
        for attempt in 1...Self.attempts {
            do {
                let response = try await outbound.post(
                    url, for: appID.uuid.lowercasedText, headers: headers, body: body, timeout: attemptTimeout,
                    maximumAnswerBytes: Self.maximumAnswerBytes, logger: logger)
                if (200..<300).contains(response.status) { return }
                lastFailure = SMSDeliveryFailure(reason: "HTTP \(response.status)")
                guard response.status >= 500 else { break }
            } catch {
                switch error.kind {
                case .addressRefused:
                    logger.warning("SMS delivery refused", metadata: ["reason": "\(error.reason)"])
                    throw SMSDeliveryFailure(reason: error.reason)
                case .noAnswer, .timedOut: lastFailure = SMSDeliveryFailure(reason: "no answer")
                case .answerTooLarge: lastFailure = SMSDeliveryFailure(reason: "answer too large")
                }
            }
            if attempt < Self.attempts { try? await Task.sleep(for: Self.backoff.pause(beforeRetry: attempt)) }
        }
        logger.warning("SMS delivery failed", metadata: ["reason": "\(lastFailure.reason)"])
        throw lastFailure
    }
}
