import GatewayCore
import Testing

@Suite struct TokenRequestTests {
    static let appID = "layer:///apps/staging/4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e20"

    func request(appID: String? = appID, userID: String? = "alice", nonce: String? = "abc+/=123") throws(GatewayError)
        -> TokenRequest
    {
        try TokenRequest(appID: appID, userID: userID, nonce: nonce, credentials: Credentials(type: "static"))
    }

    func rejection(_ make: () throws(GatewayError) -> TokenRequest) -> GatewayError? {
        do {
            _ = try make()
            return nil
        } catch {
            return error
        }
    }

    @Test func aValidRequestKeepsTheNonceByteForByte() throws {
        let request = try request(nonce: "abc+/=123")
        #expect(request.nonce == "abc+/=123")
        #expect(request.userID == "alice")
    }

    @Test func theLongestNonceAndUserIDAreAccepted() throws {
        let visibleASCII = (0x21...0x7E).map { Character(UnicodeScalar(UInt8($0))) }
        let nonce = String((0..<1024).map { visibleASCII[$0 % visibleASCII.count] })
        let userID = String(repeating: "é", count: 128)  // 256 bytes of UTF-8
        let request = try request(userID: userID, nonce: nonce)
        #expect(request.nonce == nonce)
        #expect(request.userID == userID)
    }

    @Test(arguments: [
        (nil, "app_id is required."),
        ("", "app_id is required."),
        ("layer:///apps/dev/4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e20", "app_id must be"),
    ] as [(String?, String)])
    func badAppIDsNameTheField(_ appID: String?, _ message: String) {
        let error = rejection { () throws(GatewayError) in try request(appID: appID) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.hasPrefix(message) == true)
    }

    @Test(arguments: [
        "", String(repeating: "a", count: 257), "ali\u{0}ce", "alice\n", "a\u{7F}b", "a\u{85}b",
    ])
    func badUserIDsAreRefused(_ userID: String) {
        let error = rejection { () throws(GatewayError) in try request(userID: userID) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.hasPrefix("user_id") == true)
    }

    @Test func aMissingUserIDIsLeftToTheCredentialPlugin() throws {
        #expect(try request(userID: nil).userID == nil)
    }

    @Test(arguments: [nil, "", String(repeating: "n", count: 1025), "caf\u{E9}", "tab\there", "a\u{7F}"] as [String?])
    func badNoncesAreRefused(_ nonce: String?) {
        let error = rejection { () throws(GatewayError) in try request(nonce: nonce) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.hasPrefix("nonce") == true)
    }

    @Test func aNonceWithASpaceNamesTheURLDecodingMistake() {
        let error = rejection { () throws(GatewayError) in try request(nonce: "abc /=123") }
        #expect(error?.message.contains("URL-decoded") == true)
        #expect(error?.message.contains("'+'") == true)
    }

    @Test func credentialsAreBounded() {
        let tooMany = Dictionary(uniqueKeysWithValues: (0...Credentials.maximumFieldCount).map { ("f\($0)", "v") })
        let longValue = ["password": String(repeating: "p", count: Credentials.maximumFieldBytes + 1)]
        let longIDToken = ["id_token": String(repeating: "t", count: Credentials.maximumSignedProofBytes + 1)]
        let longName = [String(repeating: "n", count: Credentials.maximumNameBytes + 1): "v"]
        for credentials in [Credentials(type: ""), Credentials(type: String(repeating: "t", count: 65)),
                            Credentials(type: "static", fields: tooMany), Credentials(type: "webhook", fields: longValue),
                            Credentials(type: "id_token", fields: longIDToken),
                            Credentials(type: "webhook", fields: longName)] {
            let error = rejection { () throws(GatewayError) in
                try TokenRequest(appID: Self.appID, userID: "a", nonce: "n", credentials: credentials)
            }
            #expect(error?.message.hasPrefix("credentials") == true)
        }
        let longest = ["password": String(repeating: "p", count: Credentials.maximumFieldBytes)]
        #expect(throws: Never.self) {
            try TokenRequest(appID: Self.appID, userID: "a", nonce: "n", credentials: Credentials(type: "webhook", fields: longest))
        }
        // An ID token may be longer than a password: only the field of that name.
        let idToken = ["id_token": String(repeating: "t", count: Credentials.maximumSignedProofBytes)]
        #expect(throws: Never.self) {
            try TokenRequest(appID: Self.appID, userID: "a", nonce: "n", credentials: Credentials(type: "id_token", fields: idToken))
        }
    }

    @Test func aRequiredCredentialFieldIsNamedWhenMissing() {
        #expect(throws: GatewayError.invalidRequest("credentials.password is required for credentials of type password.")) {
            try Credentials(type: "password").requiredField("password")
        }
    }
}
