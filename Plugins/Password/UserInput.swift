import Foundation
import GatewayCore
import GatewayPluginKit

/// The fields of a user write (`PUT`, `PATCH`, one line of an import), read
/// strictly. Absent fields stay `nil`; for `PATCH`, a field sent as `null`
/// clears it (see ``cleared``).
struct UserInput: Sendable {
    enum Password: Sendable {
        /// A password to hash; it already passed the app's policy.
        case plain(String)
        /// A hash imported as is.
        case hash(PasswordHash)
    }

    static let fields: Set<String> = Set(ProfileFields.names + ["avatar_url", "password", "password_hash", "disabled"])

    var password: Password?
    var profile = UserProfile()
    /// Profile fields sent as `null` or empty: a `PATCH` clears them.
    var cleared: Set<String> = []
    var disabled: Bool?

    init(_ input: JSONInput, policy: PasswordPolicy, extraFields: Set<String> = []) throws(GatewayError) {
        try input.rejectUnknown(allowed: Self.fields.union(extraFields))
        switch (try input.string("password"), try input.string("password_hash")) {
        case (let plain?, nil):
            try policy.check(plain)
            password = .plain(plain)
        case (nil, let text?):
            guard let hash = PasswordHash(text) else {
                throw .invalidRequest(
                    "password_hash must be an argon2id or argon2i PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash) "
                        + "within the accepted costs, or a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 15).")
            }
            try policy.hashLimits.check(hash, "password_hash")
            password = .hash(hash)
        case (nil, nil):
            password = nil
        case (_?, _?):
            throw .invalidRequest("Send password or password_hash, not both.")
        }
        profile.firstName = try name("first_name", in: input)
        profile.lastName = try name("last_name", in: input)
        profile.displayName = try name("display_name", in: input)
        profile.avatarURL = try avatarURL(in: input)
        disabled = try input.bool("disabled")
    }

    /// Applies this input to `profile` as a `PATCH`: sent fields replace,
    /// `null` clears, absent fields stay.
    func patch(_ profile: UserProfile) -> UserProfile {
        var result = profile
        func apply(_ key: String, _ value: String?, to field: WritableKeyPath<UserProfile, String?>) {
            if let value { result[keyPath: field] = value } else if cleared.contains(key) { result[keyPath: field] = nil }
        }
        apply("first_name", self.profile.firstName, to: \.firstName)
        apply("last_name", self.profile.lastName, to: \.lastName)
        apply("display_name", self.profile.displayName, to: \.displayName)
        apply("avatar_url", self.profile.avatarURL, to: \.avatarURL)
        return result
    }

    private mutating func name(_ key: String, in input: JSONInput) throws(GatewayError) -> String? {
        guard input.has(key) else { return nil }
        let value = try ProfileFields.name(try input.string(key), field: key)
        if value == nil { cleared.insert(key) }
        return value
    }

    private mutating func avatarURL(in input: JSONInput) throws(GatewayError) -> String? {
        guard input.has("avatar_url") else { return nil }
        let value = try ProfileFields.avatarURL(try input.string("avatar_url"))
        if value == nil { cleared.insert("avatar_url") }
        return value
    }
}
