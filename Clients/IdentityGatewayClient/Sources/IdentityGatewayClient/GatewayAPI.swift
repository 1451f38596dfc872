import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The gateway's public routes on the wire: JSON requests, and answers read
/// into values or into ``IdentityGatewayError``. No state.
struct GatewayAPI: Sendable {
    let configuration: GatewayClientConfiguration
    let transport: any HTTPTransport

    /// An answer the gateway gave: its status, body and `Retry-After`.
    struct Answer: Sendable {
        let status: Int
        let body: Data
        let retryAfter: Duration?

        var isSuccess: Bool { (200..<300).contains(status) }
    }

    /// The error body every refusal has, and the second step's ticket where one is asked for.
    struct Refusal: Decodable {
        let error: String
        let message: String?
        let mfa_ticket: String?
        let mfa_ticket_expires_in: Int?
        let mfa_methods: [String]?
    }

    /// A token answer.
    struct Minted: Decodable {
        let identity_token: String
        let token_profile: String?
        let refresh_token: String?
        let session_id: String?
        let refresh_token_expires_in: Int?
        /// A refresh's tokens for its `additional_nonces`, in their order.
        let additional_identity_tokens: [String]?
    }

    /// Posts `body` (any `Encodable`) as JSON to `path`. Throws
    /// ``IdentityGatewayError/network(_:)`` when no answer came.
    func post(_ path: String, _ body: some Encodable & Sendable) async throws(IdentityGatewayError) -> Answer {
        var request = URLRequest(url: configuration.gatewayURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.timeoutInterval = configuration.requestTimeout.inSeconds
        do {
            request.httpBody = try JSONEncoder().encode(body)
        } catch {
            throw .unexpectedAnswer("the request could not be encoded: \(error)")
        }
        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch {
            throw .network(Self.describe(error))
        }
        let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init).map { Duration.seconds(max(0, $0)) }
        return Answer(status: response.statusCode, body: data, retryAfter: retryAfter)
    }

    /// Reads a successful answer's body as `T`.
    static func decode<T: Decodable>(_ type: T.Type, from answer: Answer) throws(IdentityGatewayError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: answer.body)
        } catch {
            throw .unexpectedAnswer("a \(answer.status) answer that is not the expected JSON: \(error)")
        }
    }

    /// The refusal an unsuccessful answer stands for.
    static func refusal(of answer: Answer) -> IdentityGatewayError {
        guard let refusal = try? JSONDecoder().decode(Refusal.self, from: answer.body) else {
            if answer.status == 429 { return .rateLimited(retryAfter: answer.retryAfter ?? .seconds(1)) }
            if answer.status >= 500 { return .unavailable(code: "http_\(answer.status)", retryAfter: answer.retryAfter) }
            return .unexpectedAnswer("a \(answer.status) answer without an error body")
        }
        switch (answer.status, refusal.error) {
        case (429, _): return .rateLimited(retryAfter: answer.retryAfter ?? .seconds(1))
        case (_, "invalid_credentials"): return .invalidCredentials
        case (_, "app_disabled"): return .appDisabled
        case (_, "email_unverified"): return .emailUnverified
        case (_, "mfa_required"): return .secondFactorRequired
        case (_, "step_up_required"): return .stepUpRequired
        case (_, "recent_sign_in_required"): return .recentSignInRequired
        case (_, "email_taken"): return .emailTaken
        case (500..., let code): return .unavailable(code: code, retryAfter: answer.retryAfter)
        case (_, let code): return .refused(code: code, message: refusal.message ?? "")
        }
    }

    /// What a transport's error says, for ``IdentityGatewayError/network(_:)``.
    static func describe(_ error: any Error) -> String {
        if let error = error as? URLError {
            switch error.code {
            case .timedOut: return "timed out"
            case .cannotConnectToHost: return "cannot connect to the gateway"
            // Linux's URLSession (libcurl) calls a connection closed before any answer a bad server response.
            case .networkConnectionLost, .badServerResponse: return "the connection closed without an answer"
            case .notConnectedToInternet: return "not connected to the internet"
            default: return "network error \(error.code.rawValue)"
            }
        }
        return String(describing: error)
    }
}

extension Duration {
    /// Whole and fractional seconds, as Foundation's time intervals count.
    var inSeconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
