public import Foundation
public import GatewayCore
public import GatewayPluginKit
import GatewayOutbound

/// A send channel's protection against abuse (`plugins.phone_code.send_protection`,
/// `plugins.email_code.send_protection`), read strictly: a human check
/// before a code goes out, the countries a code may go to (SMS), and the
/// pumping breaker (SMS). The channel's daily budget is a rate limit of its
/// own (`sms_daily_budget`, `email_daily_budget`), set like any other.
/// An app admin may tighten these; loosening them is an operator's
/// (``loosening(of:)``). docs/plugins.md describes each member.
public struct SendProtection: Sendable, Equatable {
    /// A CAPTCHA provider's siteverify, asked before a send.
    public struct HumanCheck: Sendable, Equatable {
        public enum Provider: String, Sendable, CaseIterable {
            case turnstile
            case hcaptcha

            /// The provider's siteverify endpoint.
            public var verifyURL: URL {
                switch self {
                case .turnstile: URL(string: "https://challenges.cloudflare.com/turnstile/v0/siteverify")!
                case .hcaptcha: URL(string: "https://api.hcaptcha.com/siteverify")!
                }
            }
        }

        public enum Mode: String, Sendable {
            /// Every send asks for a check.
            case always
            /// Only once the client address, the destination's prefix or the
            /// app made ``riskySends`` sends within ``riskyWindowSeconds``.
            case whenRisky = "when_risky"
        }

        public var provider: Provider
        /// The provider's secret key (write-only, sealed at rest).
        public var secret: String
        /// The site key, sent to hCaptcha so a token of another site fails there too.
        public var siteKey: String?
        /// The host names a solved check may come from (the answer's `hostname`).
        public var hostnames: [String]
        /// The widget's action the answer must carry (Turnstile), if set.
        public var action: String?
        public var mode: Mode
        public var riskySends: Int
        public var riskyWindowSeconds: Int
        /// Whether a send goes ahead (audited) when the provider cannot be asked.
        public var failOpen: Bool
        /// How long one siteverify call may take.
        public var timeoutMilliseconds: Int
        /// Where siteverify is asked; the provider's own unless an operator points it elsewhere.
        public var verifyURL: URL

        public static let riskySendRange = 0...10_000
        public static let riskyWindows = 60...86_400
        public static let timeouts = 200...10_000
        /// How long a provider's token is good for (both say 300 s): a used
        /// token is remembered this long, so it is refused here even if the provider forgot it.
        public static let tokenLifetimeSeconds = 300
    }

    /// Which countries a code may go to, by the number's calling code (``CallingCodes``).
    public enum Countries: Sendable, Equatable {
        case allow(Set<String>)
        case deny(Set<String>)

        public func allows(_ country: String?) -> Bool {
            switch self {
            case .allow(let listed): country.map(listed.contains) ?? false
            case .deny(let listed): !(country.map(listed.contains) ?? false)
            }
        }
    }

    /// The pumping breaker: sends to each destination prefix counted over a
    /// sliding window, held to the larger of ``minimumSends`` and
    /// ``surgeFactor`` × the prefix's average window over the 24 windows
    /// before (its baseline). The send past that trips the breaker for the
    /// prefix for ``openSeconds``.
    public struct Breaker: Sendable, Equatable {
        /// How many leading digits (after `+`) make a prefix.
        public var prefixDigits: Int
        public var minimumSends: Int
        public var surgeFactor: Int
        public var windowSeconds: Int
        public var openSeconds: Int

        public static let prefixLengths = 3...10
        public static let minimums = 1...100_000
        public static let factors = 2...20
        public static let windows = 300...86_400
        public static let openings = 300...604_800
        /// How many windows the baseline averages.
        public static let baselineWindows = 24

        public init(prefixDigits: Int = 6, minimumSends: Int = 50, surgeFactor: Int = 4, windowSeconds: Int = 3600, openSeconds: Int = 43_200) {
            self.prefixDigits = prefixDigits
            self.minimumSends = minimumSends
            self.surgeFactor = surgeFactor
            self.windowSeconds = windowSeconds
            self.openSeconds = openSeconds
        }

        /// The prefix of `e164` this breaker counts under: its first ``prefixDigits`` digits, with `+`.
        public func prefix(of e164: String) -> String { String(e164.prefix(prefixDigits + 1)) }

        /// How many sends the window allows given the baseline's count over
        /// its 24 windows (each one's share): never fewer than ``minimumSends``.
        public func threshold(baselineCount: Double) -> Int {
            max(minimumSends, Int((Double(surgeFactor) * baselineCount / Double(Self.baselineWindows)).rounded(.up)))
        }
    }

    public var humanCheck: HumanCheck?
    public var countries: Countries?
    /// Nil when off; on by default for SMS (``Breaker/init``), off for email.
    public var breaker: Breaker?

    public init(humanCheck: HumanCheck? = nil, countries: Countries? = nil, breaker: Breaker? = nil) {
        self.humanCheck = humanCheck
        self.countries = countries
        self.breaker = breaker
    }

    /// Reads `send_protection` under `path` (`plugins.phone_code`). `sms`
    /// channels take `countries` and `breaker` (the breaker on by default);
    /// email takes the human check only.
    public init(_ input: JSONInput?, path: String, sms: Bool) throws(GatewayError) {
        let path = "\(path).send_protection"
        guard let input else {
            self.init(breaker: sms ? Breaker() : nil)
            return
        }
        try input.rejectUnknown(allowed: sms ? ["human_check", "countries", "breaker"] : ["human_check"])
        let check = try input.object("human_check")
        let countries = try input.object("countries")
        self.init(
            humanCheck: try check.map { check throws(GatewayError) in try Self.readHumanCheck(check, path: "\(path).human_check") },
            countries: try countries.map { countries throws(GatewayError) in try Self.countries(countries, path: "\(path).countries") },
            breaker: sms ? try Self.breaker(input, path: "\(path).breaker") : nil)
    }

    /// The `send_protection` of a channel's whole options (`plugins.<type>`),
    /// for ``loosening(of:)``: read alone, so that the comparison does not
    /// hang on the rest of the options (a ceiling an operator lowered since,
    /// a secret left out); nil when it cannot be read.
    public static func within(_ options: JSONValue, path: String, sms: Bool) -> SendProtection? {
        guard let input = try? JSONInput(options, path: path) else { return nil }
        return try? SendProtection(try? input.object("send_protection"), path: path, sms: sms)
    }

    /// Reads a `human_check` object at `path` (a channel's, or the password plugin's for sign-ins).
    public static func readHumanCheck(_ input: JSONInput, path: String) throws(GatewayError) -> HumanCheck {
        try input.rejectUnknown(allowed: [
            "provider", "secret", "site_key", "hostnames", "action", "mode", "risky_after_sends", "risky_window_seconds",
            "fail_open", "timeout_ms", "verify_url",
        ])
        guard let provider = try input.string("provider").flatMap(HumanCheck.Provider.init) else {
            throw .invalidRequest("\(path).provider is required: turnstile or hcaptcha.")
        }
        let hostnames = try input.strings("hostnames", maximumCount: 20) ?? []
        guard !hostnames.isEmpty, hostnames.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 253 && !$0.contains(" ") }) else {
            throw .invalidRequest("\(path).hostnames is required: the 1 to 20 host names your widget is served from.")
        }
        let modeText = try input.string("mode") ?? HumanCheck.Mode.always.rawValue
        guard let mode = HumanCheck.Mode(rawValue: modeText) else {
            throw .invalidRequest("\(path).mode must be always or when_risky.")
        }
        let verifyURL = try input.httpURL("verify_url") ?? provider.verifyURL
        if let refusal = OutboundAddressPolicy.refusal(of: verifyURL, field: "\(path).verify_url") { throw refusal }
        let action = try input.string("action")
        if let action, action.isEmpty || action.utf8.count > 32 {
            throw .invalidRequest("\(path).action must be 1 to 32 characters.")
        }
        let siteKey = try input.string("site_key")
        if let siteKey, siteKey.isEmpty || siteKey.utf8.count > 128 {
            throw .invalidRequest("\(path).site_key must be 1 to 128 characters.")
        }
        return HumanCheck(
            provider: provider, secret: try input.secret("secret", bytes: 8...256), siteKey: siteKey, hostnames: hostnames.map { $0.lowercased() },
            action: action, mode: mode,
            riskySends: try input.integer("risky_after_sends", in: HumanCheck.riskySendRange) ?? 3,
            riskyWindowSeconds: try input.integer("risky_window_seconds", in: HumanCheck.riskyWindows) ?? 3600,
            failOpen: try input.bool("fail_open") ?? false,
            timeoutMilliseconds: try input.integer("timeout_ms", in: HumanCheck.timeouts) ?? 3000,
            verifyURL: verifyURL)
    }

    private static func countries(_ input: JSONInput, path: String) throws(GatewayError) -> Countries {
        try input.rejectUnknown(allowed: ["allow", "deny"])
        let allow = try input.strings("allow", maximumCount: 300)
        let deny = try input.strings("deny", maximumCount: 300)
        guard (allow == nil) != (deny == nil) else {
            throw .invalidRequest("\(path) takes allow or deny: a list of ISO 3166 country codes (\"001\" for non-geographic numbers).")
        }
        let listed = (allow ?? deny ?? []).map { $0.uppercased() }
        if let unknown = listed.first(where: { !CallingCodes.knownCountries.contains($0) }) {
            throw .invalidRequest("\(path): '\(unknown)' is no country a phone number reads as (ISO 3166 alpha-2, or 001).")
        }
        return allow != nil ? .allow(Set(listed)) : .deny(Set(listed))
    }

    private static func breaker(_ input: JSONInput, path: String) throws(GatewayError) -> Breaker? {
        guard input.has("breaker") else { return Breaker() }
        // `false` turns it off; an object sets it.
        if case .bool(false)? = input.members["breaker"] { return nil }
        guard let breaker = try input.object("breaker") else {
            throw .invalidRequest("\(path) must be an object, or false to turn it off.")
        }
        try breaker.rejectUnknown(allowed: ["prefix_digits", "minimum_sends", "surge_factor", "window_seconds", "open_seconds"])
        var settings = Breaker()
        settings.prefixDigits = try breaker.integer("prefix_digits", in: Breaker.prefixLengths) ?? settings.prefixDigits
        settings.minimumSends = try breaker.integer("minimum_sends", in: Breaker.minimums) ?? settings.minimumSends
        settings.surgeFactor = try breaker.integer("surge_factor", in: Breaker.factors) ?? settings.surgeFactor
        settings.windowSeconds = try breaker.integer("window_seconds", in: Breaker.windows) ?? settings.windowSeconds
        settings.openSeconds = try breaker.integer("open_seconds", in: Breaker.openings) ?? settings.openSeconds
        return settings
    }

    /// The first member in which these settings are looser than `stored`,
    /// by its path under `send_protection`; nil when they loosen nothing. An
    /// app admin may only tighten: an operator makes the rest.
    public func loosening(of stored: SendProtection) -> String? {
        if let was = stored.humanCheck {
            guard let now = humanCheck else { return "human_check" }
            if now.mode == .whenRisky && was.mode == .always { return "human_check.mode" }
            if now.mode == .whenRisky && (now.riskySends > was.riskySends || now.riskyWindowSeconds < was.riskyWindowSeconds) {
                return "human_check.risky_after_sends"
            }
            if now.failOpen && !was.failOpen { return "human_check.fail_open" }
            if now.verifyURL != was.verifyURL { return "human_check.verify_url" }
            if !Set(now.hostnames).isSubset(of: Set(was.hostnames)) { return "human_check.hostnames" }
        } else if let now = humanCheck, now.verifyURL != now.provider.verifyURL {
            return "human_check.verify_url"
        }
        switch (stored.countries, countries) {
        case (nil, _): break
        case (.some, nil): return "countries"
        case (.allow(let was), .allow(let now)) where !now.isSubset(of: was): return "countries.allow"
        case (.deny(let was), .deny(let now)) where !was.isSubset(of: now): return "countries.deny"
        case (.allow, .deny), (.deny, .allow): return "countries"
        default: break
        }
        if let was = stored.breaker {
            guard let now = breaker else { return "breaker" }
            if now.minimumSends > was.minimumSends { return "breaker.minimum_sends" }
            if now.surgeFactor > was.surgeFactor { return "breaker.surge_factor" }
            if now.openSeconds < was.openSeconds { return "breaker.open_seconds" }
            if now.prefixDigits != was.prefixDigits || now.windowSeconds != was.windowSeconds { return "breaker.window" }
        }
        return nil
    }
}
