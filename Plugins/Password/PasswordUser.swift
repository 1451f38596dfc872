import Foundation
import GatewayCore
import GatewayPluginKit

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

    /// The user as self-service sees them.
    var account: Account {
        Account(userID: userID, email: profile[.email], emailVerified: profile.emailVerified, disabled: disabled)
    }
}

/// What an admin write stores: everything but the times.
struct PasswordUserRecord: Sendable {
    var userID: String
    var hash: PasswordHash
    var profile: UserProfile
    var disabled: Bool
}
