import Foundation
import GatewayTestSupport
import Testing

/// Benchmarks/load/switches.py (`SWITCHES=1` of the load script): each
/// context switch counts for its kind of thread, as blocked (a wait of its
/// own) or preempted (taken off the core on its way back to user space),
/// divided by the requests served while it was recorded.
@Suite struct SwitchesScriptTests {
    @Test func eachSwitchCountsForItsThreadKindAndWhyItStopped() async throws {
        let script = FileManager.default.temporaryDirectory.appending(path: "switches-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: script) }
        // As `perf script -F comm,tid,event,ip,sym --no-demangle` prints them.
        let poolWait = """
            oot.default-qos 17101 sched:sched_switch:
            \tffffffff821f8b58 __schedule
            \tffffffff821f94c3 schedule
            \t           8f2a1 __futex_abstimed_wait_common
            \t           34a10 _dispatch_worker_thread

            """
        let loopWait = """
            NIO-SGLTN-1-#2 17029 sched:sched_switch:
            \tffffffff821f8b58 __schedule
            \tffffffff8157a3c1 do_epoll_wait
            \t          129e3a epoll_wait
            \t         100dccd $s8NIOPosix8SelectorC10whenReady0yyF

            """
        let signerPreempted = """
            token-signer-0 17030 sched:sched_switch:
            \tffffffff821f8b58 __schedule
            \tffffffff821f39f0 irqentry_exit_to_user_mode
            \t          130cac BN_mod_exp_mont_consttime

            """
        try (poolWait + poolWait + loopWait + signerPreempted).write(to: script, atomically: true, encoding: .utf8)

        let run = try await GatewayProcess.runProgram(
            "/usr/bin/python3", [Repository.path("Benchmarks/load/switches.py"), script.path, "1", "2"],
            environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
        let lines = run.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first == "context switches a request: 2.00", "\(run.output)")
        for expected in [
            "1.000  Swift's pool         blocked",
            "0.500  NIO event loops      blocked",
            "0.500  signing threads      preempted",
            "0.500  signing threads      preempted  BN_mod_exp_mont_consttime",
        ] {
            #expect(lines.contains(expected), "\(expected) in:\n\(run.output)")
        }
    }
}
