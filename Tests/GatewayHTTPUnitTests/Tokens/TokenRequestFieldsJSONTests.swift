import Foundation
import GatewayCore
@testable import GatewayHTTP
@testable import GatewayPluginKit
import GatewayTestSupport
import Testing

/// ``TokenRequestFields/init(json:)``, the JSON reader of a token request.
@Suite struct TokenRequestFieldsJSONTests {
    private func read(_ text: String) throws(TokenRequestFields.JSONFailure) -> TokenRequestFields {
        try TokenRequestFields(json: Array(text.utf8))
    }

    @Test func readsTheFieldsAndSkipsEverythingElse() throws {
        let body = """
             { "extra": [1, -0.5e+10, 2E-3, true, false, null, {"deep": [[], {}]}, "x"],
            "app_id" :"a\\u00e9\\ud83d\\ude00\\/\\"\\\\\\b\\f\\n\\r\\t", "user_id": null,
            "nonce":"n", "credentials": {"type": "password", "password": "p\\u0041"}, "z": {} }\r\n
            """
        let decoded = try read(body)
        #expect(decoded.appID == "aé😀/\"\\\u{8}\u{c}\n\r\t")
        #expect(decoded.userID == nil)
        #expect(decoded.nonce == "n")
        #expect(decoded.credentials == ["type": "password", "password": "pA"])
        #expect(try read(#"{"credentials":null}"#).credentials == nil)
        #expect(try read("{}").appID == nil)
    }

    @Test func agreesWithJSONSerializationOnRandomObjects() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1f}", "é", "😀", "\u{2028}"]
        func randomText() -> String { String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement()! }) }
        for _ in 0..<300 {
            var object: [String: Any] = ["app_id": randomText(), "nonce": randomText(), randomText() + "_": [randomText(), 1.5, ["k": NSNull()]]]
            if Bool.random() { object["user_id"] = randomText() }
            let credentials = ["type": randomText(), "password": randomText()]
            object["credentials"] = credentials
            let data = try JSONSerialization.data(withJSONObject: object)
            let decoded = try TokenRequestFields(json: Array(data))
            #expect(decoded.appID == object["app_id"] as? String)
            #expect(decoded.userID == object["user_id"] as? String)
            #expect(decoded.nonce == object["nonce"] as? String)
            #expect(decoded.credentials == credentials)
        }
    }

    @Test(arguments: MalformedJSON.samples)
    func refusesWhatIsNotAJSONObject(_ body: [UInt8]) {
        #expect(throws: TokenRequestFields.JSONFailure.syntax(.malformed)) { try TokenRequestFields(json: body) }
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        let limit = StrictJSONReader.maximumDepth
        let deepest = #"{"a":"# + String(repeating: "[", count: limit) + String(repeating: "]", count: limit) + "}"
        #expect(try read(deepest).appID == nil)
        let tooDeep = #"{"a":"# + String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1) + "}"
        #expect(throws: TokenRequestFields.JSONFailure.syntax(.tooDeep)) { try read(tooDeep) }
        let hostile = String(repeating: "[", count: 100_000)
        #expect(throws: TokenRequestFields.JSONFailure.syntax(.tooDeep)) { try read(#"{"a":"# + hostile) }
    }

    @Test(arguments: [
        (#"{"user_id":42}"#, "user_id"),
        (#"{"app_id":{"x":"y"},"nonce":[1]}"#, "app_id"),
        (#"{"credentials":{"type":"static","password":7}}"#, "credentials.password"),
        (#"{"credentials":{"type":null}}"#, "credentials.type"),
    ])
    func namesTheFirstMemberThatIsNotAString(_ body: String, _ path: String) throws {
        #expect(try read(body).typeMismatch == .notAString(path: path))
        #expect(throws: GatewayError.invalidRequest("\(path) must be a string.")) { try read(body).validated() }
    }

    /// Issue 76.9: a member of the wrong type is refused by validation, not
    /// by reading, so the strings around it (the app id the denial's row
    /// needs) are read.
    @Test func aTypeMismatchKeepsTheAppIDForTheRow() throws {
        let fields = try read(#"{"app_id":"a","nonce":5,"credentials":{"type":"refresh_token","refresh_token":12345}}"#)
        #expect(fields.appID == "a")
        #expect(fields.typeMismatch == .notAString(path: "nonce"))
    }

    @Test(arguments: [#"{"credentials":5}"#, #"{"credentials":"static"}"#, #"{"credentials":[]}"#])
    func credentialsMustBeAnObject(_ body: String) throws {
        #expect(try read(body).typeMismatch == .notAnObject(path: "credentials"))
    }

    @Test func aSyntaxErrorWinsOverATypeMismatch() {
        #expect(throws: TokenRequestFields.JSONFailure.syntax(.malformed)) { try read(#"{"user_id":42,"nonce":}"#) }
    }

    @Test(arguments: [
        #"{"app_id":"a","app_id":"b"}"#, #"{"app_id":"a","app\u005fid":"b"}"#,
        #"{"credentials":{"type":"a","type":"b"}}"#, #"{"x":{"k":1,"k":2}}"#,
    ])
    func refusesAMemberNamedTwice(_ body: String) {
        #expect(throws: TokenRequestFields.JSONFailure.syntax(.duplicateMember)) { try read(body) }
    }
}
