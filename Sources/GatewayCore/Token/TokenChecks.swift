/// The checks every profile's validation makes, each failure a
/// ``TokenValidationReport/Problem`` with a stable code: the header's fixed
/// members, claims that must be strings or equal fixed values, and times.
public struct TokenChecks {
    public private(set) var problems: [TokenValidationReport.Problem] = []
    public let token: ParsedIdentityToken

    public init(_ token: ParsedIdentityToken) {
        self.token = token
    }

    /// The signature comes first: nothing else matters without it.
    public mutating func signature(_ verifies: Bool) {
        if !verifies { add("bad_signature", "The signature does not verify under this app's key or secret for the profile.") }
    }

    /// A header member that must be `expected`, a constant of the format (`alg`, `cty`): the message says which.
    public mutating func header(_ name: String, is expected: String) {
        if token.header[name] != .string(expected) { add("wrong_\(name)", "The header's \(name) must be \(expected).") }
    }

    /// A header member that must be a value of the app's settings (a key id):
    /// the message names the problem, never the value, since anyone may ask.
    public mutating func header(_ name: String, matchesSetting expected: String) {
        if token.header[name] != .string(expected) { add("wrong_\(name)", "The header's \(name) is not the one this app's settings give.") }
    }

    /// A claim that must be `expected`, a constant of the format: the message says which.
    public mutating func claim(_ name: String, is expected: String) {
        if token.claims[name] != .string(expected) { add("bad_\(name)", "The \(name) claim must be \(expected).") }
    }

    /// A claim that must be a value of the app's settings (an account, an
    /// issuer): the message names the problem, never the value.
    public mutating func claim(_ name: String, matchesSetting expected: String) {
        if token.claims[name] != .string(expected) { add("bad_\(name)", "The \(name) claim is not the one this app's settings give.") }
    }

    /// A non-empty string claim; returns it.
    @discardableResult
    public mutating func nonEmptyClaim(_ name: String, _ meaning: String) -> String? {
        guard let value = token.claims[name]?.stringValue, !value.isEmpty else {
            add("bad_\(name)", "The \(name) claim must be a non-empty string: \(meaning).")
            return nil
        }
        return value
    }

    /// `start` and `exp` integers, `exp` later and at most `maximumLifetime` seconds after.
    public mutating func times(start: String = "iat", maximumLifetime: Int64) {
        let begins = Self.integer(token.claims[start])
        let ends = Self.integer(token.claims["exp"])
        if begins == nil { add("bad_\(start)", "The \(start) claim must be an integer: seconds since the epoch.") }
        if ends == nil { add("bad_exp", "The exp claim must be an integer: seconds since the epoch.") }
        guard let begins, let ends else { return }
        if ends <= begins {
            add("exp_not_after_\(start)", "The exp claim must be later than \(start).")
        } else if ends - begins > maximumLifetime {
            add("lifetime_too_long", "exp - \(start) must be at most \(maximumLifetime) seconds.")
        }
    }

    public mutating func add(_ code: String, _ message: String) {
        problems.append(TokenValidationReport.Problem(code, message))
    }

    static func integer(_ value: JSONValue?) -> Int64? {
        guard case .number(let number) = value, number.rounded() == number, abs(number) < 9_007_199_254_740_992 else {
            return nil
        }
        return Int64(number)
    }
}
