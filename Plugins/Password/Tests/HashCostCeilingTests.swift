import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
@testable import PasswordPlugin
import StaticUsersPlugin
import Synchronization
import Testing

/// An app's admin cannot make one login cost the replica its memory: argon2
/// costs above the operator's ceiling are refused, and the hashes running at
/// once hold no more than the memory budget, whatever the number of logins.
@Suite struct HashCostCeilingTests {
    @Test func anAppCannotSetACostAboveTheCeilingNorImportAHashAboveIt() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.app(app.appID))
            let costly = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID)", token: token,
                json: ["plugins": ["password": ["argon2": ["memory_kib": 262_144, "iterations": 1]]]])
            #expect(costly.status == .badRequest)
            #expect(text(costly).contains("password.max_memory_kib"))
            let slow = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID)", token: token,
                json: ["plugins": ["password": ["argon2": ["memory_kib": 8192, "iterations": 10]]]])
            #expect(slow.status == .badRequest)
            #expect(text(slow).contains("password.max_iterations"))

            // A legacy hash at 1 GiB: refused on import, before anyone verifies against it.
            let imported = try await gateway.admin(
                .put, TestGateway.userPath("mallory", in: app), token: token,
                json: ["password_hash": "$argon2id$v=19$m=1048576,t=1,p=1$c29tZXNhbHQ$qLml5cbqFAO6YxVHhrSBHP0UWdxrIxkNcM8aMX3blzU"])
            #expect(imported.status == .badRequest)
            #expect(text(imported).contains("password.max_memory_kib"))
            // PHP's defaults (m=64 MiB, t=4) fit.
            let php = try await gateway.admin(
                .put, TestGateway.userPath("phpuser", in: app), token: token,
                json: ["password_hash": "$argon2id$v=19$m=65536,t=4,p=1$c29tZXNhbHQ$qLml5cbqFAO6YxVHhrSBHP0UWdxrIxkNcM8aMX3blzU"])
            #expect(php.status == .created, "\(text(php))")
        }
    }

    /// Eight hashes of 8 MiB at once on four threads, within a 16 MiB budget:
    /// never more than two run together, and all finish. Each job waits (up
    /// to 5 s) for a second one to run beside it, so a loaded machine that
    /// starts the threads late cannot hide that two fit.
    @Test func runningHashesStayWithinTheMemoryBudget() async throws {
        let hasher = PasswordHasher(limits: .init(concurrency: 4, queueLimit: 16, memoryBudgetKiB: 16_384))
        final class Concurrency: Sendable {
            let running = Atomic(0)
            let most = Atomic(0)
        }
        let seen = Concurrency()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await hasher.perform(memoryKiB: 8192, for: .login(AppID(uuid: UUID()))) {
                        let now = seen.running.wrappingAdd(1, ordering: .relaxed).newValue
                        _ = seen.most.max(now, ordering: .relaxed)
                        let deadline = ContinuousClock.now + .seconds(5)
                        while seen.running.load(ordering: .relaxed) < 2, ContinuousClock.now < deadline {
                            usleep(1_000)  // the hash's work, on the hashing thread
                        }
                        seen.running.wrappingSubtract(1, ordering: .relaxed)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(seen.most.load(ordering: .relaxed) == 2)
        #expect(hasher.memoryInUseKiB == 0)
    }

    /// A hash waiting for memory holds a place in the queue: with no queue,
    /// the third login while two wait on one hash's memory is `busy` at once.
    @Test func waitingForMemoryCountsAgainstTheQueueLimit() async throws {
        let hasher = PasswordHasher(limits: .init(concurrency: 2, queueLimit: 0, memoryBudgetKiB: 8192))
        let waiting = Mutex<Task<Int, any Error>?>(nil)
        try await hasher.whileOccupied(memoryKiB: 8192) {
            waiting.withLock { $0 = Task { try await hasher.perform(memoryKiB: 8192, for: .login(AppID(uuid: UUID()))) { 1 } } }
            while hasher.depth < 2 { await Task.yield() }
            await #expect(throws: GatewayError.self) { try await hasher.perform(memoryKiB: 8192, for: .login(AppID(uuid: UUID()))) { 1 } }
        }
        // Once the memory is free, the waiting hash runs.
        #expect(try await waiting.withLock { $0 }?.value == 1)
        #expect(hasher.memoryInUseKiB == 0)
    }
}
