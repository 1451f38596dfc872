import Foundation
import IdentityGatewayClient
import Testing

/// The file store: only its owner reads it, a successor replaces only the
/// token it was minted for, and a refused token removes only itself.
@Suite struct FileSessionStoreTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
    var file: URL { folder.appendingPathComponent("sessions/app.json") }

    func session(_ token: String) -> StoredSession {
        StoredSession(
            appID: "app", sessionID: "s", userID: "alice", refreshToken: token,
            refreshTokenExpiresAt: Date(timeIntervalSince1970: 1_900_000_000))
    }

    @Test func theFileAndItsFolderAreTheOwnersAlone() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileSessionStore(url: file)
        #expect(try await store.load() == nil)
        #expect(try await store.save(session("rt-a"), replacing: nil))
        let fileMode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        let folderMode = try FileManager.default.attributesOfItem(atPath: file.deletingLastPathComponent().path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(folderMode == 0o700)
        #expect(try await FileSessionStore(url: file).load() == session("rt-a"))
    }

    @Test func aSuccessorReplacesOnlyTheTokenItWasMintedFor() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileSessionStore(url: file)
        #expect(try await store.save(session("rt-a"), replacing: nil))
        #expect(try await store.save(session("rt-b"), replacing: "rt-a"))
        // Another process's late successor of rt-a does not overwrite rt-b.
        #expect(try await !store.save(session("rt-b-late"), replacing: "rt-a"))
        #expect(try await store.load()?.refreshToken == "rt-b")
        try await store.remove(ifHolding: "rt-a")
        #expect(try await store.load()?.refreshToken == "rt-b")
        try await store.remove(ifHolding: "rt-b")
        #expect(try await store.load() == nil)
        try await store.remove(ifHolding: nil)
    }

    @Test func refreshesOverOneFileTakeTurnsAcrossStores() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let inside = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                let store = FileSessionStore(url: file)
                group.addTask {
                    try await store.exclusively {
                        await inside.enter()
                        try await Task.sleep(for: .milliseconds(5))
                        await inside.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await inside.most == 1)
    }
}

actor Counter {
    private var now = 0
    private(set) var most = 0

    func enter() {
        now += 1
        most = max(most, now)
    }

    func leave() { now -= 1 }
}
