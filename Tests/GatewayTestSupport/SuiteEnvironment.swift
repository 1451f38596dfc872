import Foundation
import Synchronization
import Testing

/// What `./scripts/test` provides the tests (a throwaway PostgreSQL, the
/// built binary, the vendors' libraries, ...), by environment variable.
///
/// Under `./scripts/test` (`GATEWAY_TEST_SUITE=full`, as in CI) a missing
/// one fails the test that needs it: nothing is skipped silently. In a
/// plain `swift test`, that test is cancelled instead, and one line says
/// how to run it, so the tests that need nothing of the kind still give a
/// clean verdict.
public enum SuiteEnvironment {
    /// Whether this run is `./scripts/test`'s, where every test must run.
    public static var isFullSuite: Bool { ProcessInfo.processInfo.environment["GATEWAY_TEST_SUITE"] == "full" }

    /// Whether the suites that compare answer times (`*TimingTests`) wait
    /// for a run of their own: `./scripts/test` runs every other test first,
    /// twelve at once, then those alone. Beside the parallel run on two
    /// cores a self-service request took 139 ms instead of 9 and varied by
    /// tens of milliseconds, so a median of a few milliseconds' difference
    /// came out 36 ms in one CI run and 0.7 ms alone.
    public static var timingTestsDeferred: Bool { ProcessInfo.processInfo.environment["GATEWAY_TEST_TIMING"] == "deferred" }

    public static let timingTestsDeferredReason = "compares answer times: runs alone after the parallel run"

    public struct Missing: Error, CustomStringConvertible {
        public let name: String
        public var description: String { "\(name) is not set: run the tests with ./scripts/test" }
    }

    /// The value of `name`, or: under `./scripts/test` the error that fails
    /// the test; otherwise the test's cancellation.
    public static func value(_ name: String) throws -> String {
        if let value = ProcessInfo.processInfo.environment[name], !value.isEmpty { return value }
        if isFullSuite { throw Missing(name: name) }
        announceOnce()
        try Test.cancel("needs \(name): run ./scripts/test")
    }

    private static let announced = Mutex(false)

    private static func announceOnce() {
        let first = announced.withLock { announced in
            defer { announced = true }
            return !announced
        }
        guard first else { return }
        FileHandle.standardError.write(
            Data(
                ("note: tests that need PostgreSQL, the built binary or the vendors' libraries are cancelled in a plain "
                    + "`swift test`; `./scripts/test` starts a throwaway PostgreSQL and runs every test.\n").utf8))
    }
}
