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

    /// Who the user is in a token: the profile's fields become claims.
    var identity: VerifiedIdentity { VerifiedIdentity(userID: userID, profile: profile) }
}

/// What an admin write stores: everything but the times.
struct PasswordUserRecord: Sendable {
    var userID: String
    var hash: PasswordHash
    var profile: UserProfile
    var disabled: Bool
}
