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

    static let fields: Set<String> = Set(UserProfile.fieldNames + ["password", "password_hash", "disabled"])

    var password: Password?
    var profile = UserProfile()
    /// Profile fields sent as `null` or empty: a `PATCH` clears them.
    var cleared: Set<ProfileField> = []
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
        for field in ProfileField.allCases where input.has(field.name) {
            profile[field] = try field.checked(try input.string(field.name))
            if profile[field] == nil { cleared.insert(field) }
        }
        disabled = try input.bool("disabled")
    }

    /// Applies this input to `profile` as a `PATCH`: sent fields replace,
    /// `null` clears, absent fields stay.
    func patch(_ profile: UserProfile) -> UserProfile {
        var result = profile
        for (field, value) in self.profile.fields { result[field] = value }
        for field in cleared { result[field] = nil }
        // An address someone proved stays proven only while it is the same address.
        if result[.email]?.lowercased() != profile[.email]?.lowercased() { result.emailVerified = nil }
        return result
    }
}
