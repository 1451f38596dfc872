import Foundation
import GatewayCore
import GatewayHTTP
import Hummingbird
import OpenSSLSigner

/// The floor under the gateway's token path (issue 61): a bare Hummingbird
/// server that reads the same body through the gateway's own reader and
/// signs the same Layer token with the same OpenSSL signer, on the request's
/// task, and does nothing else: no middleware, no app lookup, no limits, no
/// row, no hop to signing threads. `Benchmarks/load/run`'s `floor` scenario
/// puts it under the same load as `off` (the gateway with limits and audit
/// off) and `peer` (the Python server): what separates `off` from it is the
/// gateway's own; what separates it from `peer` is the framework's.
///
///     FLOOR_KEY_FILE=key.pem FLOOR_PORT=18082 token-floor
///     FLOOR_KEY_FILE=key.pem token-floor --signing-rates 4
@main
struct TokenFloor {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        let port = Int(environment["FLOOR_PORT"] ?? "") ?? 18082
        guard let keyFile = environment["FLOOR_KEY_FILE"] else {
            FileHandle.standardError.write(Data("token-floor: set FLOOR_KEY_FILE to an RSA private key in PEM\n".utf8))
            exit(64)
        }
        let arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == "--signing-rates", let seconds = Double(arguments[2]), seconds > 0 {
            let rates = try SigningRates.measure(keyPEM: try String(contentsOfFile: keyFile, encoding: .utf8), seconds: seconds)
            print(try JSONCoding.text(of: rates))
            return
        }
        let key = TokenSigningKey(
            keyID: KeyID(uuid: UUID()), signer: try OpenSSLRS256Signer(privateKeyPEM: try String(contentsOfFile: keyFile, encoding: .utf8)))
        let issuer = ProviderID(uuid: UUID())
        let router = Router()
        router.post("/v1/identity_tokens") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 64 * 1024)
            let asked: TokenRequest
            do {
                asked = try TokenRequestFields(body: Array(buffer: body), contentType: request.headers[.contentType]).validated()
            } catch {
                return Response(status: .badRequest)
            }
            let claims = IdentityTokenClaims(
                issuer: issuer, identity: VerifiedIdentity(userID: asked.userID ?? ""), nonce: asked.nonce,
                issuedAt: Int64(Date().timeIntervalSince1970), lifetimeSeconds: 600)
            let answer = #"{"identity_token":""# + (try key.mint(claims)) + #""}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        try await app.runService()
    }
}
