public import Foundation
import Synchronization

/// Cloudflare Turnstile's siteverify as its documentation describes it:
/// a form POST of `secret`, `response` and `remoteip`, answered with JSON
/// `success`, `challenge_ts`, `hostname`, `action` and `error-codes`; a
/// token is good once, for 300 seconds (`timeout-or-duplicate` after
/// either), and an unknown one is `invalid-input-response`.
public final class TurnstileStandIn: Sendable {
    public static let secret = "0x4AAAAAAA-stand-in-secret"
    public static let hostname = "app.example.com"
    public static let action = "send_code"

    public init() {}

    private struct Issued {
        let hostname: String
        let action: String
        let solvedAt: Date
    }

    private let issued = Mutex<[String: Issued]>([:])
    private let spent = Mutex<Set<String>>([])
    private let requests = Mutex<[[String: String]]>([])

    /// How many times siteverify was asked.
    public var asked: Int { requests.withLock { $0.count } }
    /// The secrets it was asked with.
    public var secretsSeen: Set<String> { Set(requests.withLock { $0.compactMap { $0["secret"] } }) }

    /// A token as a solved widget of `hostname` with `action` gives, solved `age` seconds ago.
    public func issue(hostname: String = hostname, action: String = action, age: TimeInterval = 0) -> String {
        let token = "0.stand-in." + UUID().uuidString
        issued.withLock { $0[token] = Issued(hostname: hostname, action: action, solvedAt: Date().addingTimeInterval(-age)) }
        return token
    }

    /// Marks a token as verified once already (by another of the site's servers).
    public func spend(_ token: String) { _ = spent.withLock { $0.insert(token) } }

    /// The app's `human_check` settings with this stand-in at `base`.
    public func settings(_ base: String) -> [String: any Sendable] {
        [
            "provider": "turnstile", "secret": Self.secret, "hostnames": [Self.hostname], "action": Self.action,
            "verify_url": base + "/turnstile/v0/siteverify",
        ]
    }

    public func answer(_ request: FakeHTTPServer.Recorded) -> FakeHTTPServer.Answer {
        let form = Self.form(request.body)
        requests.withLock { $0.append(form) }
        func failure(_ code: String) -> FakeHTTPServer.Answer {
            FakeHTTPServer.Answer(body: #"{"success":false,"error-codes":["\#(code)"],"messages":[]}"#)
        }
        guard form["secret"] == Self.secret else { return failure("invalid-input-secret") }
        guard let token = form["response"], !token.isEmpty else { return failure("missing-input-response") }
        guard let found = issued.withLock({ $0[token] }) else { return failure("invalid-input-response") }
        guard Date().timeIntervalSince(found.solvedAt) <= 300, spent.withLock({ $0.insert(token).inserted }) else {
            return failure("timeout-or-duplicate")
        }
        let stamp = ISO8601DateFormatter().string(from: found.solvedAt)
        return FakeHTTPServer.Answer(
            body: #"{"success":true,"challenge_ts":"\#(stamp)","hostname":"\#(found.hostname)","error-codes":[],"action":"\#(found.action)","cdata":""}"#)
    }

    /// An `application/x-www-form-urlencoded` body's fields.
    public static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}

