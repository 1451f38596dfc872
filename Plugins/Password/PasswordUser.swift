import Foundation
import GatewayCore

/// One user of an app's password directory.
struct PasswordUser: Sendable {
    var userID: String
    var hash: PasswordHash
    var profile: UserProfile
    var disabled: Bool
    var createdAt: Date
    var updatedAt: Date
    var lastLoginAt: Date?

    /// Who the user is in a token: the profile's non-empty fields become claims.
    var identity: VerifiedIdentity {
        VerifiedIdentity(
            userID: userID, firstName: profile.firstName, lastName: profile.lastName,
            displayName: profile.displayName, avatarURL: profile.avatarURL)
    }
}

/// The optional profile fields that become a token's claims. Empty values
/// are stored as absent.
struct UserProfile: Sendable, Equatable {
    var firstName: String?
    var lastName: String?
    var displayName: String?
    var avatarURL: String?
}

/// What an admin write stores: everything but the times.
struct PasswordUserRecord: Sendable {
    var userID: String
    var hash: PasswordHash
    var profile: UserProfile
    var disabled: Bool
}
