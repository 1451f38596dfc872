import AsyncHTTPClient
import Crypto
import Foundation
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

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
/// Each delivery gets an HTTP client of its own that connects to the address
/// ``SenderAddressPolicy`` checked (TLS still verifies the URL's host name)
/// and follows no redirect: a sender that answers 3xx has failed, so a public
/// URL cannot bounce the gateway onto its own network. Every connection-level
/// failure reads the same, so the audit trail an app admin sees cannot tell
/// a closed port from a slow one.
struct SMSSender: Sendable {
    static let attemptTimeout = TimeAmount.seconds(5)
    static let attempts = 2
    /// Header names of the webhook's signature, documented in the README.
    static let timestampHeader = "X-Gateway-Timestamp"
    static let signatureHeader = "X-Gateway-Signature"

    let addresses: SenderAddressPolicy
    let logger: Logger

    func send(_ message: SMSMessage, via sender: PhoneCodeOptions.Sender) async throws(SMSDeliveryFailure) {
        switch sender {
        case .log:
            // The one place a code may appear in a log line: development apps only.
            logger.notice(
                "phone code (log sender, development app)",
                metadata: ["app_id": "\(message.appID)", "phone_number": "\(message.phoneNumber)", "code": "\(message.code)"])
        case .webhook(let url, let secret):
            let destination = try await checked(url)
            try await deliver(Self.webhookRequest(message, url: url, secret: secret, now: Date()), to: url, at: destination)
        case .twilio(let accountSID, let authToken, let from, let text, let baseURL):
            let destination = try await checked(baseURL)
            var request = HTTPClientRequest(
                url: baseURL.appending(path: "2010-04-01/Accounts/\(accountSID)/Messages.json").absoluteString)
            request.method = .POST
            let credentials = Data("\(accountSID):\(authToken)".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(credentials)")
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            let body = Self.form([
                ("To", message.phoneNumber.text), ("From", from), ("Body", text.replacingOccurrences(of: "{code}", with: message.code)),
            ])
            request.body = .bytes(ByteBuffer(string: body))
            try await deliver(request, to: baseURL, at: destination)
        }
    }

    /// `POST url` with `{app_id, phone_number, code, expires_in}` and
    /// `X-Gateway-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>`.
    static func webhookRequest(_ message: SMSMessage, url: URL, secret: String, now: Date) -> HTTPClientRequest {
        let body = Data(
            #"{"app_id":"\#(message.appID.uuid.lowercasedText)","phone_number":"\#(message.phoneNumber)","code":"\#(message.code)","expires_in":\#(message.expiresIn)}"#
                .utf8)
        let timestamp = String(Int(now.timeIntervalSince1970))
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: timestampHeader, value: timestamp)
        request.headers.add(name: signatureHeader, value: "v1=" + signature(secret: secret, timestamp: timestamp, body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        return request
    }

    /// The webhook signature: hex HMAC-SHA256 of `timestamp.body` under the app's secret.
    static func signature(secret: String, timestamp: String, body: Data) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(timestamp.utf8) + Data(".".utf8) + body, using: SymmetricKey(data: Data(secret.utf8)))
        return mac.map { String(format: "%02x", $0) }.joined()
    }

    /// Refuses (and logs) a sender address ``SenderAddressPolicy`` does not
    /// allow; otherwise the address to connect to (nil: let the client resolve).
    private func checked(_ url: URL) async throws(SMSDeliveryFailure) -> IPAddress? {
        do {
            return try await addresses.destination(of: url)
        } catch {
            logger.warning("SMS delivery refused", metadata: ["reason": "\(error.reason)"])
            throw error
        }
    }

    /// Sends `request` to `url`'s host, connecting to `address` when one is given.
    private func deliver(_ request: HTTPClientRequest, to url: URL, at address: IPAddress?) async throws(SMSDeliveryFailure) {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        if let address, let host = url.host(percentEncoded: false) {
            configuration.dnsOverride = [host: address.description]
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var lastFailure = SMSDeliveryFailure(reason: "not attempted")
        for attempt in 1...Self.attempts {
            do {
                let response = try await client.execute(request, timeout: Self.attemptTimeout, logger: logger)
                _ = try? await response.body.collect(upTo: 64 * 1024)
                if (200..<300).contains(response.status.code) {
                    try? await client.shutdown()
                    return
                }
                lastFailure = SMSDeliveryFailure(reason: "HTTP \(response.status.code)")
                guard response.status.code >= 500 else { break }
            } catch {
                lastFailure = SMSDeliveryFailure(reason: "no answer")
            }
            if attempt < Self.attempts { try? await Task.sleep(for: .milliseconds(200)) }
        }
        try? await client.shutdown()
        logger.warning("SMS delivery failed", metadata: ["reason": "\(lastFailure.reason)"])
        throw lastFailure
    }

    private static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return fields.map { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}
