// The client library in a few lines: sign in, then answer three challenges
// as a Layer app's `layerClient(_:didReceiveAuthenticationChallengeWithNonce:)`
// would, each with a token minted from the stored session (no password).
//
//   gateway-client-example <gateway URL> <app id> <user id> <password> [static|password] [session file]
//
// With `./scripts/dev` running, the demo app's user:
//   gateway-client-example http://127.0.0.1:8080 4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e20 alice wonderland static
import Foundation
import IdentityGatewayClient

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 4, let gatewayURL = URL(string: arguments[arguments.startIndex]) else {
    FileHandle.standardError.write(
        Data("usage: gateway-client-example <gateway URL> <app id> <user id> <password> [static|password] [session file]\n".utf8))
    exit(64)
}
let values = Array(arguments)
let (appID, userID, password) = (values[1], values[2], values[3])
let credential: Credential = values.count > 4 && values[4] == "password" ? .password(password) : .staticUser(password: password)
let sessionFile =
    values.count > 5
    ? URL(fileURLWithPath: values[5])
    : FileManager.default.temporaryDirectory.appendingPathComponent("gateway-client-example/session.json")

let client = GatewayClient(
    configuration: GatewayClientConfiguration(gatewayURL: gatewayURL, appID: appID, deviceLabel: "gateway-client-example"),
    store: FileSessionStore(url: sessionFile))

do {
    switch try await client.signIn(userID: userID, credential: credential, nonce: UUID().uuidString) {
    case .signedIn:
        guard let session = try await client.session() else {
            print("signed in, but the app keeps no sessions: each challenge would need the password again")
            exit(1)
        }
        print("signed in as \(session.userID ?? userID), session \(session.sessionID)")
    case .secondFactorRequired:
        print("this user has a second factor: the example signs in with one factor only")
        exit(1)
    }
    for challenge in 1...3 {
        // What Layer's client hands the app on each challenge.
        let nonce = "challenge-\(challenge)-\(UUID().uuidString)"
        let token = try await client.identityToken(forNonce: nonce)
        print("challenge \(challenge): a \(token.profile) token for nonce \(token.nonce), \(token.token.prefix(24))...")
    }
    try await client.signOut()
    print("signed out")
} catch {
    print("failed: \(error)")
    exit(1)
}
