import Crypto
import Foundation
import GatewayConsoleKit
import GatewayCore
import HTTPTypes
import Hummingbird

/// The console's two cookies: the session (an id whose digest finds the
/// server-side session) and, before sign-in, the sign-in form's CSRF value.
/// Both are HttpOnly and SameSite=Strict, and Secure with the `__Host-`
/// prefix when the console is reached over TLS.
struct ConsoleCookies: Sendable {
    let secure: Bool

    var sessionName: String { secure ? "__Host-gateway_console" : "gateway_console" }
    var signInName: String { secure ? "__Host-gateway_console_sign_in" : "gateway_console_sign_in" }

    /// A new random value for a cookie: 256 bits, base64url.
    static func randomValue() -> String {
        Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    /// What the database keeps of a session id.
    static func digest(of sessionID: String) -> Data {
        Data(SHA256.hash(data: Data(sessionID.utf8)))
    }

    /// The CSRF token of the session with this id: only someone holding the
    /// cookie can compute it, and it needs no storage of its own.
    static func csrfToken(for sessionID: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("console csrf".utf8), using: SymmetricKey(data: Data(sessionID.utf8)))
        return Base64URL.encode(Data(mac))
    }

    func value(named name: String, in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                // Our values are base64url, 43 characters; anything else is not ours.
                guard value.count == 43, value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                    return nil
                }
                return value
            }
        }
        return nil
    }

    func setting(_ name: String, to value: String, maxAge: Duration?) -> String {
        var parts = ["\(name)=\(value)", "Path=/", "HttpOnly", "SameSite=Strict"]
        if secure { parts.append("Secure") }
        if let maxAge { parts.append("Max-Age=\(maxAge.components.seconds)") }
        return parts.joined(separator: "; ")
    }

    func clearing(_ name: String) -> String {
        var parts = ["\(name)=", "Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=0"]
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }
}
