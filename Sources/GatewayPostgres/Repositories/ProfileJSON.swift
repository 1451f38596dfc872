import Foundation
import GatewayCore

/// A profile (``GatewayCore/UserProfile``) kept as one JSON object of its
/// fields, `{"display_name": "Ada"}`, with `"email_verified": "true"` or
/// `"false"` where that is known: how a session keeps the profile its sign-in gave.
enum ProfileJSON {
    static let emailVerifiedKey = "email_verified"

    static func text(_ profile: UserProfile) -> String {
        var writer = JSONObjectWriter(reservingCapacity: 64)
        for (field, value) in profile.fields { writer.add(field.name, value) }
        if let verified = profile.emailVerified { writer.add(emailVerifiedKey, verified ? "true" : "false") }
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    /// The fields of `text` that are profile fields; others are ignored.
    static func profile(_ text: String) throws -> UserProfile {
        let members = try JSONCoding.decode([String: String].self, from: text)
        var profile = UserProfile()
        for field in ProfileField.allCases { profile[field] = members[field.name] }
        profile.emailVerified = members[emailVerifiedKey].map { $0 == "true" }
        return profile
    }
}
