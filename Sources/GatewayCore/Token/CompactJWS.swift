public import Crypto

/// The compact serialization of a JWS (RFC 7515 §7.1):
/// `base64url(header) "." base64url(claims) "." base64url(signature)`.
public enum CompactJWS {
    /// `claims` (JSON bytes, signed exactly as given) under the header
    /// ``headerPrefix(_:)`` encoded once for the key's life, signed by `sign`.
    public static func encode(
        headerPrefix: [UInt8], claims: [UInt8], sign: ([UInt8]) throws -> [UInt8]
    ) rethrows -> String {
        // One buffer, room made for all of it (an RSA-2048 signature is 342 characters): the signing
        // input, then in place the dot and the signature.
        var token = headerPrefix
        token.reserveCapacity(headerPrefix.count + (claims.count * 4 + 2) / 3 + 1 + 344)
        Base64URL.append(claims, to: &token)
        let signature = try sign(token)
        token.append(UInt8(ascii: "."))
        Base64URL.append(signature, to: &token)
        return String(decoding: token, as: UTF8.self)
    }

    /// `base64url(header) + "."` for a header of string members, in the
    /// order given: computed once per key, the constant start of its tokens.
    public static func headerPrefix(_ members: KeyValuePairs<String, String>) -> [UInt8] {
        var header = JSONObjectWriter(reservingCapacity: 128)
        for (name, value) in members { header.add(name, value) }
        return Array((Base64URL.encode(header.finish()) + ".").utf8)
    }

    /// HMAC-SHA256 under `secret` (JWS `HS256`).
    public static func hs256(_ secret: SymmetricKey) -> ([UInt8]) -> [UInt8] {
        { message in Array(HMAC<SHA256>.authenticationCode(for: message, using: secret)) }
    }
}
