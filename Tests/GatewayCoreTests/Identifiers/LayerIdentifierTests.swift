import Foundation
import GatewayCore
import Testing

@Suite struct LayerIdentifierTests {
    static let uuid = "4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e20"

    @Test(arguments: [
        "layer:///apps/staging/\(uuid)",
        "layer:///apps/production/\(uuid)",
        uuid,
        uuid.uppercased(),
        "LAYER:///APPS/STAGING/\(uuid.uppercased())",
        "layer:///apps/Production/\(uuid)",
    ])
    func everyAppIDFormNamesTheSameApp(_ text: String) throws {
        let appID = try #require(AppID(text))
        #expect(appID.uuid == UUID(canonicalText: Self.uuid))
        #expect(appID.description == Self.uuid)
    }

    @Test(arguments: [
        "", "layer:///apps/\(uuid)", "layer:///apps/dev/\(uuid)", "layer://apps/staging/\(uuid)",
        "layer:///keys/\(uuid)", "layer:///apps/staging/\(uuid)x", " \(uuid)", "\(uuid) ",
        "4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e2", "not-a-uuid-at-all-not-a-uuid-at-all!",
        "layer:///apps/staging/" + String(repeating: "a", count: 500),
        // Only ASCII case is ignored: Unicode case mapping reads U+212A (Kelvin) as k, U+0130 as i.
        "layer:///\u{212A}eys/\(uuid)", "layer:///apps/stag\u{0130}ng/\(uuid)",
    ])
    func malformedAppIDsAreRefused(_ text: String) {
        #expect(AppID(text) == nil)
    }

    @Test func keyAndProviderIDsAcceptTheirURIAndBareForms() throws {
        let key = try #require(KeyID("layer:///keys/\(Self.uuid)"))
        #expect(KeyID(Self.uuid) == key)
        #expect(key.description == "layer:///keys/\(Self.uuid)")
        #expect(KeyID("layer:///providers/\(Self.uuid)") == nil)

        let provider = try #require(ProviderID(Self.uuid.uppercased()))
        #expect(provider.description == "layer:///providers/\(Self.uuid)")
        #expect(ProviderID("layer:///providers/\(Self.uuid)") == provider)
        #expect(ProviderID("layer:///keys/\(Self.uuid)") == nil)
    }

    @Test func identifiersRoundTripThroughJSON() throws {
        let provider = try #require(ProviderID(Self.uuid))
        let data = try JSONEncoder().encode([provider])
        #expect(String(decoding: data, as: UTF8.self).contains("layer:\\/\\/\\/providers\\/\(Self.uuid)"))
        #expect(try JSONDecoder().decode([ProviderID].self, from: data) == [provider])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([ProviderID].self, from: Data(#"["x"]"#.utf8)) }
    }
}
