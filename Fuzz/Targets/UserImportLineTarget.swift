@testable import GatewayCore
@testable import PasswordPlugin

/// One line of a user import (NDJSON): a user with a valid id and a
/// password or an acceptable hash, or a 400 that names the user id only
/// when the line gave one.
enum UserImportLineTarget {
    static let policy = PasswordPolicy(minimumLength: 8)

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        switch Result(catching: { () throws(UserImporter.LineFailure) in try UserImporter.user(fromLine: bytes[...], policy: policy) }) {
        case .success(let (userID, input)):
            try invariant((try? TokenRequest.validatedUserID(userID)) == userID, "an invalid user id \(userID.debugDescription)")
            switch input.password {
            case .plain(let password)?:
                try invariant(password.utf8.count <= PasswordPolicy.maximumBytes && password.count >= 8, "password length")
            case .hash(let hash)?:
                try invariant(PasswordHash(hash.text) == hash, "a hash that does not read again")
            case nil:
                try invariant(false, "a user without a password")
            }
        case .failure(let error):
            try invariant(error.error.kind == .invalidRequest && error.error.code == .invalidRequest, "threw \(error.error)")
        }
    }
}
