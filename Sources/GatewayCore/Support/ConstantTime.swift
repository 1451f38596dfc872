import Crypto
import Foundation

/// Comparisons whose duration does not depend on where two secrets differ.
public enum ConstantTime {
    /// Whether `a` and `b` are equal, in time independent of their contents:
    /// both are hashed first, so even their lengths do not leak.
    public static func equals(_ a: String, _ b: String) -> Bool {
        equals(Array(a.utf8), Array(b.utf8))
    }

    /// Whether two byte strings are equal, in time independent of their contents.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let left = SHA256.hash(data: a)
        let right = SHA256.hash(data: b)
        var difference: UInt8 = 0
        for (x, y) in zip(left, right) { difference |= x ^ y }
        return difference == 0
    }
}
