@testable import GatewayPostgres
import Testing

/// An undurable server's settings are named at startup, one problem each.
@Suite struct DurabilityVerdictTests {
    @Test func anUndurableServerIsNamed() {
        let throwaway = DurabilityCheck.Settings(fsync: "off", synchronousCommit: "on")
        #expect(throwaway.problems.count == 1)
        #expect(throwaway.problems[0].contains("fsync = off"))
        let pooled = DurabilityCheck.Settings(fsync: "on", synchronousCommit: "off")
        #expect(pooled.problems.count == 1)
        #expect(pooled.problems[0].contains("synchronous_commit = off"))
        #expect(DurabilityCheck.Settings(fsync: "on", synchronousCommit: "on").problems.isEmpty)
        #expect(DurabilityCheck.Settings(fsync: "on", synchronousCommit: "local").problems.isEmpty)
    }
}
