import Crypto
import Foundation

/// Comparisons whose duration does not depend on where two secrets differ.
public enum ConstantTime {
    /// Whether `a` and `b` are equal, in time independent of their contents:
    /// both are hashed first, so even their lengths do not leak.
    public static func equals(_ a: String, _ b: String) -> Bool {
        let left = SHA256.hash(data: Data(a.utf8))
        let right = SHA256.hash(data: Data(b.utf8))
        var difference: UInt8 = 0
        for (x, y) in zip(left, right) { difference |= x ^ y }
        return difference == 0
    }
}
