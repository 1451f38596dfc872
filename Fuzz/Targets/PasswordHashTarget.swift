import Argon2
import CSodium
@testable import PasswordPlugin

/// Imported and stored password hashes: an argon2 PHC string the gateway
/// accepts is one libsodium reads too (so an accepted import can always be
/// verified), and a bcrypt hash it accepts has the two-digit cost the bcrypt
/// library reads.
enum PasswordHashTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let input = text(bytes) else { return }
        if let phc = Argon2PHCString(input) {
            let status = input.withCString { crypto_pwhash_str_needs_rehash($0, 1, 8192) }
            try invariant(status != -1, "libsodium cannot read an accepted PHC string \(input.debugDescription)")
            try invariant(Argon2PHCString.acceptedMemoryKiB.contains(phc.parameters.memoryKiB), "memory out of bounds")
        }
        guard let hash = PasswordHash(input) else { return }
        switch hash.scheme {
        case .argon2id, .argon2i:
            try invariant(Argon2PHCString(input) != nil, "an argon2 hash that is no PHC string")
        case .bcrypt:
            let cost = Array(input.utf8)[4...5]
            try invariant(cost.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }, "bcrypt cost \(input)")
            try invariant(hash.memoryKiB == 0 && hash.argon2Parameters == nil, "bcrypt with argon2 costs")
        }
    }
}
