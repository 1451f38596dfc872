import Foundation

/// The user a token names, for a session whose sign-in named none (a code,
/// an ID token, a passkey proved the user). Read from the payload without
/// checking the signature: the client only remembers it, the gateway decides.
enum TokenSubject {
    static func read(from token: IdentityToken) -> String? {
        let parts = token.token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return nil }
        // Layer's prn, OpenID's sub, Firebase's uid, Stream's user_id; Twilio names the identity in its grants.
        for claim in ["prn", "sub", "uid", "user_id"] {
            if let subject = claims[claim] as? String { return subject }
        }
        return (claims["grants"] as? [String: Any])?["identity"] as? String
    }
}
