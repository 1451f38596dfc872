@testable import GatewayHTTP
import GatewayPluginKit

/// `x-request-id` from a client: kept only when it is 1 to 128 characters
/// of `[A-Za-z0-9._-]`, so it can go into logs and audit rows as it is.
enum RequestIDTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        let candidate = String(decoding: bytes, as: UTF8.self)
        let kept = RequestIDMiddleware.acceptable(candidate)
        let safe = (1...128).contains(bytes.count) && bytes.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        try invariant((kept != nil) == safe, "kept \(String(describing: kept)) for \(bytes)")
        if let kept { try invariant(Array(kept.utf8) == bytes, "the kept id differs from the header") }
    }
}
