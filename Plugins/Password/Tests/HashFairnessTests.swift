import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
@testable import PasswordPlugin
import PostgresNIO
import Synchronization
import Testing

/// One app's admin cannot starve every tenant's password hashing: logins go
/// before admin work, apps take turns, an app's admin work holds at most its
/// share of the threads and of the queue, bcrypt's cost has a ceiling, and
/// an app runs one import at a time.
@Suite struct HashFairnessTests {
    /// A job on the hashing threads that runs until the test lets it go.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func open(_ count: Int = 1) { for _ in 0..<count { semaphore.signal() } }
        func wait() { semaphore.wait() }
    }

    /// Starts `work` on `hasher` and waits until it holds a thread or waits its turn.
    private func admit(
        _ hasher: PasswordHasher, _ work: PasswordHashWork, _ job: @escaping @Sendable () -> Void
    ) async -> Task<Void, any Error> {
        let before = hasher.inTurn
        let task = Task { try await hasher.perform(memoryKiB: 0, for: work) { job() } }
        while hasher.inTurn == before { await Task.yield() }
        return task
    }

    @Test func loginsGoFirstAndAppsTakeTurns() async throws {
        let hasher = PasswordHasher(limits: .init(concurrency: 1, queueLimit: 64))
        let (importer, other, loginApp) = (AppID(uuid: UUID()), AppID(uuid: UUID()), AppID(uuid: UUID()))
        let ran = Mutex<[String]>([])
        let gate = Gate()
        var tasks = [await admit(hasher, .admin(importer)) { gate.wait() }]
        for index in 1...5 {
            tasks.append(await admit(hasher, .admin(importer)) { ran.withLock { $0.append("import \(index)") } })
        }
        tasks.append(await admit(hasher, .admin(other)) { ran.withLock { $0.append("other app's user") } })
        tasks.append(await admit(hasher, .login(loginApp)) { ran.withLock { $0.append("login") } })
        gate.open()
        for task in tasks { try await task.value }
        #expect(ran.withLock { $0 } == ["login", "import 1", "other app's user", "import 2", "import 3", "import 4", "import 5"])
    }

    @Test func oneAppsAdminWorkHoldsAtMostHalfTheThreads() async throws {
        let hasher = PasswordHasher(limits: .init(concurrency: 2, queueLimit: 64))
        let importer = AppID(uuid: UUID())
        let gate = Gate()
        final class Concurrency: Sendable {
            let running = Atomic(0)
            let most = Atomic(0)
        }
        let seen = Concurrency()
        let importing = (0..<4).map { _ in
            Task {
                try await hasher.perform(memoryKiB: 0, for: .admin(importer)) {
                    _ = seen.most.max(seen.running.wrappingAdd(1, ordering: .relaxed).newValue, ordering: .relaxed)
                    gate.wait()
                    seen.running.wrappingSubtract(1, ordering: .relaxed)
                }
            }
        }
        while hasher.depth < 4 { await Task.yield() }
        // The second thread is free for a login while the import waits for its first hash.
        let login = try await hasher.perform(memoryKiB: 0, for: .login(AppID(uuid: UUID()))) { "logged in" }
        #expect(login == "logged in")
        gate.open(4)
        for task in importing { try await task.value }
        #expect(seen.most.load(ordering: .relaxed) == 1)
    }

    @Test func oneAppsAdminWorkCannotFillTheQueue() async throws {
        let hasher = PasswordHasher(limits: .init(concurrency: 1, queueLimit: 64))
        let (greedy, other) = (AppID(uuid: UUID()), AppID(uuid: UUID()))
        let gate = Gate()
        var admitted: [Task<Void, any Error>] = []
        for _ in 0..<hasher.adminQueuePerApp { admitted.append(await admit(hasher, .admin(greedy)) { gate.wait() }) }
        var refused = 0
        for _ in 0..<20 {
            do {
                try await hasher.perform(memoryKiB: 0, for: .admin(greedy)) {}
            } catch let error as GatewayError where error.code == .busy {
                refused += 1
            }
        }
        #expect(refused == 20)
        // Another app's admin work and logins are still admitted.
        admitted.append(await admit(hasher, .admin(other)) {})
        admitted.append(await admit(hasher, .login(greedy)) {})
        gate.open(hasher.adminQueuePerApp)
        for task in admitted { try await task.value }
    }

    @Test func importedBcryptAboveTheOperatorsCostCeilingIsRefused() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.app(app.appID))
            let salted = String(repeating: "a", count: 53)
            let costly = try await gateway.admin(
                .put, TestGateway.userPath("slow", in: app), token: token, json: ["password_hash": "$2b$15$" + salted])
            #expect(costly.status == .badRequest)
            #expect(text(costly).contains("password.max_bcrypt_cost"), "\(text(costly))")
            let fine = try await gateway.admin(
                .put, TestGateway.userPath("fine", in: app), token: token, json: ["password_hash": "$2b$12$" + salted])
            #expect(fine.status == .created, "\(text(fine))")
        }
    }

    /// While an app's import lock is held (here by the test, as another
    /// replica's import would), an import is 409; once free, it runs. That
    /// PostgreSQL's lock holds across sessions is in
    /// `PasswordUserStoreContractTests`.
    @Test func anAppRunsOneImportAtATime() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let other = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let lines = #"{"user_id":"ada","password_hash":"$2b$10$\#(String(repeating: "b", count: 53))"}"# + "\n"
            func importing(into app: AppSettings) async throws -> TestResponse {
                try await gateway.test { client in
                    try await client.execute(
                        uri: "/admin/v1/apps/\(app.appID)/users:import", method: .post,
                        headers: [.authorization: "Bearer \(token)", .contentType: "application/x-ndjson"],
                        body: ByteBuffer(string: lines))
                }
            }
            _ = try await gateway.pluginServices.passwordUsers.whileImporting(into: app.appID) {
                let busy = try await importing(into: app)
                #expect(busy.status == .conflict, "\(text(busy))")
                #expect(try jsonObject(busy)["error"] as? String == "conflict")
                // Another app's import is not held up.
                #expect(try await importing(into: other).status == .ok)
            }
            let after = try await importing(into: app)
            #expect(after.status == .ok, "\(text(after))")
        }
    }
}
