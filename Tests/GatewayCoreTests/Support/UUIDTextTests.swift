import Foundation
import GatewayCore
import Testing

@Suite struct UUIDTextTests {
    @Test func writesWhatFoundationWritesInLowercase() {
        for _ in 0..<1000 {
            let uuid = UUID()
            #expect(uuid.lowercasedText == uuid.uuidString.lowercased())
        }
        let edges = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                     UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))]
        #expect(edges.map(\.lowercasedText) == ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"])
    }

    @Test func readsBothCasesAsFoundationDoes() {
        for _ in 0..<1000 {
            let uuid = UUID()
            #expect(UUID(canonicalText: uuid.uuidString) == uuid)
            #expect(UUID(canonicalText: uuid.lowercasedText) == uuid)
            #expect(UUID(canonicalText: uuid.lowercasedText[...]) == uuid)
        }
    }

    /// Stricter than Foundation, which reads the 36 characters
    /// " 4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e2" as a different UUID
    /// (…-7d5c8b6a1e02): a malformed id must never name another app.
    @Test(arguments: [
        "", "4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e2", "4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e200",
        "4d3e1f602b1a-4c9e-9f3a-7d5c8b6a1e200", "4d3e1f60-2b1a-4c9e-9f3a_7d5c8b6a1e20",
        "{d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e2}", "4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e2g",
        " 4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e2", "4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1é",
        "------------------------------------",
    ])
    func refusesEverythingElse(_ text: String) {
        #expect(UUID(canonicalText: text) == nil)
    }
}

extension UUIDTextTests {
    @Test func randomUUIDsAreVersionFourAndDistinct() {
        let uuids = (0..<1000).map { _ in UUID.random() }
        #expect(Set(uuids).count == 1000)
        for uuid in uuids {
            #expect(uuid.uuid.6 >> 4 == 4, "version 4")
            #expect(uuid.uuid.8 >> 6 == 0b10, "RFC 9562 variant")
        }
    }
}
