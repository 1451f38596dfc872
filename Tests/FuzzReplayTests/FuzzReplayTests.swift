import Foundation
import GatewayFuzzTargets
import Testing

/// Every input committed under `Fuzz/Corpus/<target>/` (the seeds, and each
/// crash a fuzzing run found, saved there as `crash-<what>`) goes through its
/// target's invariants here, in every `./scripts/test`: a change that breaks a
/// target fails the build, and one that breaks an invariant on a known input
/// fails this suite, without a libFuzzer build.
@Suite struct FuzzReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    @Test(arguments: FuzzTarget.allCases)
    func everyCommittedInputHoldsItsTargetsInvariants(_ target: FuzzTarget) throws {
        let inputs = try Self.inputs(of: target)
        #expect(!inputs.isEmpty, "no committed input for \(target.rawValue)")
        for (name, bytes) in inputs {
            do {
                try target.run(bytes)
            } catch {
                Issue.record("\(target.rawValue)/\(name): \(error)")
            }
        }
    }

    @Test func everyCorpusFolderIsATargetsAndEveryTargetHasOne() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).filter { !$0.hasPrefix(".") }
        #expect(Set(folders) == Set(FuzzTarget.allCases.map(\.rawValue)))
    }

    /// The files under the target's folder, by their path inside it.
    static func inputs(of target: FuzzTarget) throws -> [(name: String, bytes: [UInt8])] {
        let folder = corpus.appendingPathComponent(target.rawValue)
        guard let walk = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var inputs: [(String, [UInt8])] = []
        for case let name as String in walk {
            let file = folder.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            inputs.append((name, Array(try Data(contentsOf: file))))
        }
        return inputs.sorted { $0.0 < $1.0 }
    }
}
