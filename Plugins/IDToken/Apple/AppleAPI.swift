import Crypto
import Foundation
import GatewayCore
import GatewayOutbound
import GatewayPluginKit
import Logging
import NIOCore

/// Sign in with Apple's REST API for one provider (`apple_api` of an
/// `id_token` provider): the authorization code an app gets at sign-in is
/// exchanged for Apple's refresh token, kept sealed, and revoked when the
/// user deletes their account, as the App Store asks of apps that offer Sign
/// in with Apple (guideline 5.1.1(v)). Both requests are Apple's documented
/// form posts, authenticated by a client secret: an ES256 JWT signed with
/// the app's Sign in with Apple key (`kid` the key id; `iss` the team id,
/// `sub` the client id, `aud` https://appleid.apple.com, five minutes).
///
/// ```json
/// "apple_api": {"team_id": "ABCDE12345", "key_id": "XYZ9876543",
///               "private_key": "-----BEGIN PRIVATE KEY-----\n...", "client_id": "com.example.app"}
/// ```
/// `private_key` (the `.p8` file's PEM) is sealed and write-only;
/// `client_id` is the provider's first audience unless given; `token_url`
/// and `revoke_url` default to Apple's (another https host stands in for
/// Apple in a test, or a proxy).
struct AppleAPI: Sendable, Equatable {
    static let audience = "https://appleid.apple.com"
    static let tokenURL = URL(string: "https://appleid.apple.com/auth/token")!
    static let revokeURL = URL(string: "https://appleid.apple.com/auth/revoke")!
    static let timeout: Duration = .seconds(10)
    static let secretLifetime: TimeInterval = 300

    let teamID: String
    let keyID: String
    let clientID: String
    /// The key's PEM, checked when read; parsed again to sign (rarely: a sign-in with a code, a deletion).
    let privateKeyPEM: String
    let tokenURL: URL
    let revokeURL: URL

    init(_ reader: JSONInput, path: String, environment: AppEnvironment, defaultClientID: String) throws(GatewayError) {
        try reader.rejectUnknown(allowed: ["team_id", "key_id", "private_key", "client_id", "token_url", "revoke_url"])
        let appleID = { (byte: UInt8) in (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        teamID = try reader.token("team_id", bytes: 10...10, allowed: appleID, what: "the 10-character Apple team id")
        keyID = try reader.token("key_id", bytes: 10...10, allowed: appleID, what: "the 10-character id of the Sign in with Apple key")
        privateKeyPEM = try reader.secret("private_key", bytes: 100...4096)
        guard (try? P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)) != nil else {
            throw .invalidRequest("\(path).private_key must be the PEM of the Sign in with Apple key (the .p8 file, a P-256 key).")
        }
        clientID = try reader.string("client_id") ?? defaultClientID
        guard (1...256).contains(clientID.utf8.count) else { throw .invalidRequest("\(path).client_id must be 1 to 256 bytes.") }
        var urls: [URL] = []
        for (field, standard) in [("token_url", Self.tokenURL), ("revoke_url", Self.revokeURL)] {
            guard let url = try reader.httpURL(field) else {
                urls.append(standard)
                continue
            }
            guard environment == .development || url.scheme?.lowercased() == "https" else {
                throw .invalidRequest("\(path).\(field) must be https in a production app.")
            }
            if let refusal = OutboundAddressPolicy.refusal(of: url, field: "\(path).\(field)") { throw refusal }
            urls.append(url)
        }
        tokenURL = urls[0]
        revokeURL = urls[1]
    }

    /// The client secret, as Apple documents it, signed now.
    func clientSecret(now: Date = Date()) throws -> String {
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let issued = Int64(now.timeIntervalSince1970)
        var claims = JSONObjectWriter(reservingCapacity: 256)
        claims.add("iss", teamID)
        claims.add("iat", issued)
        claims.add("exp", issued + Int64(Self.secretLifetime))
        claims.add("aud", Self.audience)
        claims.add("sub", clientID)
        return try CompactJWS.encode(
            headerPrefix: CompactJWS.headerPrefix(["alg": "ES256", "kid": keyID]), claims: claims.finish(),
            sign: { Array(try key.signature(for: $0).rawRepresentation) })
    }

    /// Exchanges an authorization code for Apple's refresh token.
    func refreshToken(
        exchanging code: String, outbound: OutboundHTTP, for subject: String, logger: Logger
    ) async throws(AppleAPIFailure) -> String {
        let answer = try await post(
            tokenURL, [("grant_type", "authorization_code"), ("code", code)], outbound: outbound, for: subject, logger: logger)
        guard answer.status == 200 else { throw AppleAPIFailure(reason: "HTTP \(answer.status)", isTransient: answer.status >= 500) }
        guard case .object(let members)? = try? JSONCoding.value(answer.body.readableBytesView),
            case .string(let token)? = members["refresh_token"], (1...4096).contains(token.utf8.count)
        else { throw AppleAPIFailure(reason: "no refresh_token in the answer", isTransient: false) }
        return token
    }

    /// Revokes a refresh token (and the grant it stands for) at Apple.
    func revoke(_ refreshToken: String, outbound: OutboundHTTP, for subject: String, logger: Logger) async throws(AppleAPIFailure) {
        let answer = try await post(
            revokeURL, [("token", refreshToken), ("token_type_hint", "refresh_token")], outbound: outbound, for: subject,
            logger: logger)
        guard answer.status == 200 else { throw AppleAPIFailure(reason: "HTTP \(answer.status)", isTransient: answer.status >= 500 || answer.status == 429) }
    }

    private func post(
        _ url: URL, _ fields: [(name: String, value: String)], outbound: OutboundHTTP, for subject: String, logger: Logger
    ) async throws(AppleAPIFailure) -> OutboundResponse {
        let secret: String
        do { secret = try clientSecret() } catch { throw AppleAPIFailure(reason: "the key cannot sign", isTransient: false) }
        let body = FormBody.encode([("client_id", clientID), ("client_secret", secret)] + fields)
        do {
            return try await outbound.post(
                url, for: subject, headers: [("content-type", FormBody.contentType), ("accept", "application/json")],
                body: ByteBuffer(string: body), timeout: Self.timeout, maximumAnswerBytes: 64 * 1024, logger: logger)
        } catch {
            throw AppleAPIFailure(reason: error.reason, isTransient: error.kind != .addressRefused)
        }
    }
}

/// Why a call to Apple failed: the reason for the log and the trail (never a token), and whether to try again.
struct AppleAPIFailure: Error, Sendable {
    let reason: String
    let isTransient: Bool
}
