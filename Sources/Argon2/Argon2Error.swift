/// Why the wrapper could not hash or verify.
public enum Argon2Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The parameters are outside ``Argon2Parameters/memoryKiBRange`` or
    /// ``Argon2Parameters/iterationsRange``, or ask for more than one lane.
    case parametersOutOfBounds(Argon2Parameters)
    /// The text is not an argon2i or argon2id PHC string this wrapper accepts.
    case malformedHash
    /// libsodium refused, which in practice means it could not allocate the memory.
    case hashingFailed

    public var description: String {
        switch self {
        case .parametersOutOfBounds(let parameters): "argon2 parameters out of bounds: \(parameters)"
        case .malformedHash: "not an argon2i or argon2id PHC string"
        case .hashingFailed: "argon2 hashing failed (out of memory?)"
        }
    }
}
