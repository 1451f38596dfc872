import PasskeyPlugin

/// WebAuthn's CBOR (attestation objects, COSE keys) through the passkey
/// plugin's strict reader. No input crashes it or passes its limits; and
/// since it takes one encoding of each value only (shortest integers and
/// lengths, definite lengths, keys in the order read), what it reads
/// encodes back (`CBORValue.encoded`) to exactly the bytes it read.
enum CBORTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        let reader = CBORReader()
        guard let value = try? reader.read(bytes) else { return }
        try invariant(value.encoded == bytes, "\(bytes) read as \(value), which encodes otherwise")
        let prefix = try? reader.readPrefix(bytes[...])
        try invariant(prefix?.1 == bytes.count && prefix?.0 == value, "the prefix reading disagrees")
        try invariant(depth(value) <= reader.maximumDepth, "nested past the limit")
    }

    static func depth(_ value: CBORValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(depth).max() ?? 0)
        case .map(let entries): 1 + (entries.map { max(depth($0.key), depth($0.value)) }.max() ?? 0)
        default: 0
        }
    }
}
