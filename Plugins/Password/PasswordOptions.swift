import Argon2
import GatewayCore

/// An app's options for the password plugin (`plugins.password`), read
/// strictly: an unknown key or a value out of bounds is a 400 naming it.
///
/// ```json
/// {"argon2": {"memory_kib": 19456, "iterations": 2}, "min_length": 8}
/// ```
struct PasswordOptions: Sendable, Equatable {
    /// The shortest password anyone may set; apps may only raise it.
    static let minimumLengthFloor = 8
    static let minimumLengthCeiling = 128

    /// The cost of new hashes, and of the comparison for unknown users.
    let argon2: Argon2Parameters
    /// Characters a new password needs at least.
    let minimumLength: Int

    init(argon2: Argon2Parameters = .owasp, minimumLength: Int = minimumLengthFloor) {
        self.argon2 = argon2
        self.minimumLength = minimumLength
    }

    init(_ options: JSONValue) throws(GatewayError) {
        let members = try Self.object(options, path: "plugins.password")
        try Self.rejectUnknown(members, allowed: ["argon2", "min_length"], path: "plugins.password")
        let minimumLength = try Self.integer(
            members["min_length"], path: "plugins.password.min_length",
            range: Self.minimumLengthFloor...Self.minimumLengthCeiling) ?? Self.minimumLengthFloor

        var argon2 = Argon2Parameters.owasp
        if let value = members["argon2"], value != .null {
            let cost = try Self.object(value, path: "plugins.password.argon2")
            try Self.rejectUnknown(cost, allowed: ["memory_kib", "iterations"], path: "plugins.password.argon2")
            argon2 = Argon2Parameters(
                memoryKiB: try Self.integer(
                    cost["memory_kib"], path: "plugins.password.argon2.memory_kib",
                    range: Argon2Parameters.memoryKiBRange) ?? Argon2Parameters.owasp.memoryKiB,
                iterations: try Self.integer(
                    cost["iterations"], path: "plugins.password.argon2.iterations",
                    range: Argon2Parameters.iterationsRange) ?? Argon2Parameters.owasp.iterations)
        }
        self.init(argon2: argon2, minimumLength: minimumLength)
    }

    private static func object(_ value: JSONValue, path: String) throws(GatewayError) -> [String: JSONValue] {
        switch value {
        case .null: return [:]
        case .object(let members): return members
        default: throw .invalidRequest("\(path) must be an object.")
        }
    }

    private static func rejectUnknown(
        _ members: [String: JSONValue], allowed: Set<String>, path: String
    ) throws(GatewayError) {
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .invalidRequest("\(path).\(unknown) is not an option of the password plugin.")
        }
    }

    private static func integer(
        _ value: JSONValue?, path: String, range: ClosedRange<Int>
    ) throws(GatewayError) -> Int? {
        switch value {
        case nil, .null: return nil
        case .number(let number) where number.rounded() == number && range.contains(Int(exactly: number) ?? .min):
            return Int(number)
        default: throw .invalidRequest("\(path) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
    }
}
