import CoreMetrics
import Crypto
public import Foundation
public import GatewayCore
import GatewayOutbound
public import GatewayPluginKit
import Logging
import NIOCore
import Synchronization

/// What every code-sending route runs before a code goes out, under the
/// app's ``SendProtection``: the human check (``checkHuman(_:token:prefix:_:)``,
/// after the route's limits, before its code is stored; the password
/// plugin's token route asks it too) and the pumping breaker
/// (``admitDelivery(to:_:_:)``, just before a message that costs is handed
/// to its provider). A refusal is thrown as the client's answer and noted in
/// the request's row; the route's reserved sends are then given back by its
/// ``PublicRequest``.
///
/// The verifier is called under an address policy that allows private
/// addresses: its URL is the provider's unless an operator set another
/// (`verify_url` is an operator's to set), such as a verifier in their own network.
public struct SendGuard: Sendable {
    /// The channel whose sends this guards: `sms` or `email` (`password` for sign-ins).
    public let channel: String
    let store: any SendProtectionStore
    let databaseRetry: DatabaseRetry
    let outbound: OutboundHTTP
    let logger: Logger
    let now: @Sendable () -> Date
    /// Each prefix's baseline as this replica last read it (``BaselineCache``).
    let baselines: BaselineCache

    /// The longest token a client may send: both providers' are far shorter.
    public static let maximumTokenBytes = 4096
    /// The name of the member a client sends the token in.
    public static let tokenField = "captcha_token"

    public init(channel: String, services: PluginServices, now: @escaping @Sendable () -> Date = { Date() }) {
        self.channel = channel
        self.store = services.sendProtection
        self.databaseRetry = services.databaseRetry
        self.outbound = OutboundHTTP(addresses: OutboundAddressPolicy(allowsPrivateAddresses: true))
        self.logger = services.logger
        self.now = now
        self.baselines = BaselineCache()
    }

    // MARK: The human check

    /// Asks the app's CAPTCHA provider about `token` where the settings say
    /// a check is due (always, or once the client address, `prefix` or the
    /// app is risky): 403 `human_check_required` without a token, 403
    /// `human_check_failed` for one the provider or this gateway refused
    /// (used before, expired, another site's, another action's), 503
    /// `human_check_unavailable` when the provider cannot be asked and the
    /// app fails closed. The row's `detail.human_check` says what happened.
    public func checkHuman(
        _ protection: SendProtection, token: String?, prefix: String?, _ passage: inout PublicRequest
    ) async throws(GatewayError) {
        guard let check = protection.humanCheck, let appID = passage.row.appID else { return }
        if check.mode == .whenRisky {
            guard try await isRisky(check, appID: appID, prefix: prefix, passage) else {
                passage.row.detail["human_check"] = "not_asked"
                return
            }
        }
        guard let token, !token.isEmpty else {
            passage.row.detail["human_check"] = "missing"
            throw GatewayError(
                .humanCheckRequired, .forbidden, "This app asks for a human check: send the solved widget's token as captcha_token.")
        }
        guard token.utf8.count <= Self.maximumTokenBytes else {
            throw GatewayError.invalidRequest("captcha_token must be at most \(Self.maximumTokenBytes) bytes.")
        }
        // Taken before the provider is asked: two requests with one token cannot both pass, on any replica.
        let hash = Array(SHA256.hash(data: Data(token.utf8)))
        let expiry = now().addingTimeInterval(Double(SendProtection.HumanCheck.tokenLifetimeSeconds))
        let claimed: Bool
        do {
            claimed = try await databaseRetry.run { [store] in try await store.claimToken(hash, in: appID, until: expiry) }
        } catch {
            throw ErrorResponder.translate(error, logger: logger)
        }
        let verdict = claimed ? await verify(token, check, clientIP: passage.clientIP, appID: appID) : .refused("already_used")
        Counter(label: "gateway_human_checks_total", dimensions: [("provider", check.provider.rawValue), ("outcome", verdict.outcome)])
            .increment()
        switch verdict {
        case .passed:
            passage.row.detail["human_check"] = "passed"
        case .refused(let reason):
            passage.row.detail["human_check"] = reason
            throw GatewayError(.humanCheckFailed, .forbidden, "The human check was not passed; solve a new one and try again.")
        case .unavailable(let reason):
            passage.row.detail["human_check"] = "unavailable"
            passage.row.detail["human_check_failure"] = reason
            if check.failOpen {
                passage.row.detail["human_check"] = "unavailable_passed_open"
                return
            }
            throw GatewayError(.humanCheckUnavailable, .unavailable, "The human check cannot be made just now; retry in a moment.")
        }
    }

    /// Whether a send from `clientIP`, to `prefix`, in the app is past the
    /// check's risky count: each counts this request (one statement).
    private func isRisky(
        _ check: SendProtection.HumanCheck, appID: AppID, prefix: String?, _ passage: PublicRequest
    ) async throws(GatewayError) -> Bool {
        let policy = RateLimitPolicy(
            name: "\(channel)_risk", limit: check.riskySends, periodSeconds: check.riskyWindowSeconds, counting: .everyRequest)
        let window = SlidingWindow(policy: policy, now: now().timeIntervalSince1970)
        let subjects = ["ip:" + passage.clientIP, "app"] + (prefix.map { ["prefix:" + $0] } ?? [])
        let touches = subjects.map { CounterTouch(appID: appID, window: window, subject: $0, mode: .count) }
        return try await passage.tally(touches).contains { !$0.allowed }
    }

    /// What a provider said about one token.
    enum Verdict: Equatable {
        case passed
        case refused(String)
        case unavailable(String)

        var outcome: String {
            switch self {
            case .passed: "passed"
            case .refused: "refused"
            case .unavailable: "unavailable"
            }
        }
    }

    /// Asks siteverify (`secret`, `response`, `remoteip`; hCaptcha's `sitekey`),
    /// then holds its answer to the app's host names and action.
    func verify(_ token: String, _ check: SendProtection.HumanCheck, clientIP: String, appID: AppID) async -> Verdict {
        var fields: [(name: String, value: String)] = [("secret", check.secret), ("response", token)]
        if clientIP != "unknown" { fields.append(("remoteip", clientIP)) }
        if check.provider == .hcaptcha, let siteKey = check.siteKey { fields.append(("sitekey", siteKey)) }
        let response: OutboundResponse
        do {
            response = try await outbound.post(
                check.verifyURL, for: appID.uuid.lowercasedText, headers: [("Content-Type", FormBody.contentType)],
                body: ByteBuffer(string: FormBody.encode(fields)), timeout: .milliseconds(check.timeoutMilliseconds),
                maximumAnswerBytes: 64 * 1024, logger: logger)
        } catch {
            logger.warning("human check provider unreachable", metadata: ["reason": "\(error.reason)"])
            return .unavailable(error.kind.rawValue)
        }
        guard (200..<300).contains(response.status) else { return .unavailable("HTTP \(response.status)") }
        return Self.verdict(Array(response.body.readableBytesView), check, now: now())
    }

    /// The verdict an answer of siteverify gives (its JSON: `success`,
    /// `hostname`, `action`, `challenge_ts`, `error-codes`).
    static func verdict(_ body: [UInt8], _ check: SendProtection.HumanCheck, now: Date) -> Verdict {
        guard let answer = try? JSONInput.parse(body, subject: "siteverify answer"), case .bool(let success)? = answer.members["success"]
        else { return .unavailable("unreadable answer") }
        guard success else {
            let codes = (try? answer.strings("error-codes", maximumCount: 20)) ?? nil
            let reason = (codes ?? []).map { String($0.prefix(40)) }.joined(separator: ",")
            return .refused(reason.isEmpty ? "refused" : reason)
        }
        guard let hostname = (try? answer.string("hostname")) ?? nil, check.hostnames.contains(hostname.lowercased()) else {
            return .refused("hostname_mismatch")
        }
        if let action = check.action, ((try? answer.string("action")) ?? nil) != action { return .refused("action_mismatch") }
        if let stamp = (try? answer.string("challenge_ts")) ?? nil, let solved = Self.timestamp(stamp),
            now.timeIntervalSince(solved) > Double(SendProtection.HumanCheck.tokenLifetimeSeconds)
        {
            return .refused("expired")
        }
        return .passed
    }

    /// An ISO 8601 time as the providers write it, with or without fractions.
    static func timestamp(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    // MARK: The pumping breaker

    /// Counts a send to `number`'s prefix against the breaker, just before
    /// it is handed to the provider: 429 `rate_limited` while the prefix's
    /// breaker is open, and for the send that trips it. The trip is written
    /// once with its own `send_breaker.tripped` row, whichever replica made it.
    ///
    /// One statement counts the send in the surge's window (held to the
    /// threshold: the count and its test are one, under the counter row's
    /// lock) and in the baseline's. The baseline is read from this replica's
    /// ``BaselineCache`` (at most a minute old; it moves over 24 windows), so
    /// a send costs the breaker one read of its trip and one count.
    public func admitDelivery(to number: String, _ protection: SendProtection, _ passage: inout PublicRequest) async throws(GatewayError) {
        guard let breaker = protection.breaker, let appID = passage.row.appID else { return }
        let prefix = breaker.prefix(of: number)
        let now = now()
        let trip: BreakerTrip?
        do {
            trip = try await store.openTrip(of: prefix, channel: channel, in: appID, now: now)
        } catch {
            throw ErrorResponder.translate(error, logger: logger)
        }
        if let trip { throw refusal(trip.openUntil, prefix: prefix, now: now, &passage) }
        let (surge, baseline) = Self.windows(breaker, channel: channel, now: now)
        let key = BaselineCache.Key(appID: appID, channel: channel, prefix: prefix)
        let baselineCount: Double
        if let cached = baselines.count(of: key, at: now) {
            baselineCount = cached
        } else {
            let read = try await passage.tally([CounterTouch(appID: appID, window: baseline, subject: prefix, mode: .read)])
            baselineCount = read.first.map { Double($0.previous) * baseline.previousWeight + Double($0.current) } ?? 0
            baselines.keep(baselineCount, for: key, at: now)
        }
        let threshold = breaker.threshold(baselineCount: baselineCount)
        let surgeWindow = SlidingWindow(
            policy: surge.policy.with(limit: threshold, periodSeconds: breaker.windowSeconds), now: now.timeIntervalSince1970)
        let counted = try await passage.tally([
            CounterTouch(appID: appID, window: surgeWindow, subject: prefix, mode: .count),
            CounterTouch(appID: appID, window: baseline, subject: prefix, mode: .count),
        ])
        guard counted.first?.allowed == false else { return }
        let until = now.addingTimeInterval(Double(breaker.openSeconds))
        var event = AuditEvent(
            appID: appID, event: "send_breaker.tripped", outcome: .failure, reason: "surge",
            credentialType: passage.row.credentialType, requestID: passage.row.requestID,
            detail: ["channel": channel, "prefix": prefix, "threshold": String(threshold),
                     "open_until": ISO8601DateFormatter().string(from: until)])
        event.clientIP = passage.row.clientIP
        let outcome: TripOutcome
        do {
            outcome = try await store.trip(
                prefix, channel: channel, in: appID, threshold: threshold, until: until, grace: breaker.windowSeconds, now: now,
                recording: event)
        } catch {
            throw ErrorResponder.translate(error, logger: logger)
        }
        switch outcome {
        case .tripped:
            Counter(label: "gateway_send_breaker_trips_total", dimensions: [("channel", channel)]).increment()
            logger.warning("send breaker tripped", metadata: ["app_id": "\(appID)", "channel": "\(channel)", "prefix": "\(prefix)"])
            throw refusal(until, prefix: prefix, now: now, &passage)
        case .alreadyOpen:
            throw refusal(until, prefix: prefix, now: now, &passage)
        case .released:
            passage.row.detail["send_breaker"] = "released"
        }
    }

    /// The breaker's two windows at `now`: the surge's (its limit set per
    /// request) and the baseline's, 24 of them long.
    static func windows(_ breaker: SendProtection.Breaker, channel: String, now: Date) -> (surge: SlidingWindow, baseline: SlidingWindow) {
        let seconds = now.timeIntervalSince1970
        let surge = RateLimitPolicy(
            name: "\(channel)_prefix_sends", limit: breaker.minimumSends, periodSeconds: breaker.windowSeconds, counting: .everyRequest)
        let baseline = RateLimitPolicy(
            name: "\(channel)_prefix_baseline", limit: Int(Int32.max),
            periodSeconds: breaker.windowSeconds * SendProtection.Breaker.baselineWindows, counting: .everyRequest)
        return (SlidingWindow(policy: surge, now: seconds), SlidingWindow(policy: baseline, now: seconds))
    }

    private func refusal(_ until: Date, prefix: String, now: Date, _ passage: inout PublicRequest) -> GatewayError {
        passage.row.reason = "send_breaker_open"
        passage.row.detail["prefix"] = prefix
        Counter(label: "gateway_send_breaker_refusals_total", dimensions: [("channel", channel)]).increment()
        let seconds = max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        return GatewayError(
            .rateLimited, .tooManyRequests, "Too many requests; retry after \(seconds) seconds.", retryAfterSeconds: seconds)
    }
}

/// Each prefix's baseline count as this replica last read it, for a minute:
/// the baseline spans 24 windows, so a minute-old reading changes a
/// threshold by little, and a busy prefix costs one read a minute instead
/// of one a send. Bounded: past its size it starts again empty.
final class BaselineCache: Sendable {
    struct Key: Hashable, Sendable {
        let appID: AppID
        let channel: String
        let prefix: String
    }

    static let lifetime: TimeInterval = 60
    static let maximumEntries = 10_000
    private let entries = Mutex<[Key: (count: Double, readAt: Date)]>([:])

    func count(of key: Key, at now: Date) -> Double? {
        entries.withLock { entries in
            guard let entry = entries[key], now.timeIntervalSince(entry.readAt) < Self.lifetime else { return nil }
            return entry.count
        }
    }

    func keep(_ count: Double, for key: Key, at now: Date) {
        entries.withLock { entries in
            if entries.count >= Self.maximumEntries { entries.removeAll(keepingCapacity: true) }
            entries[key] = (count, now)
        }
    }
}

extension GatewayError.Code {
    /// 403: the app asks for a human check and the request carried no `captcha_token`.
    public static let humanCheckRequired = GatewayError.Code(rawValue: "human_check_required")
    /// 403: the CAPTCHA provider (or this gateway) refused the token.
    public static let humanCheckFailed = GatewayError.Code(rawValue: "human_check_failed")
    /// 503: the CAPTCHA provider could not be asked and the app fails closed.
    public static let humanCheckUnavailable = GatewayError.Code(rawValue: "human_check_unavailable")
}
