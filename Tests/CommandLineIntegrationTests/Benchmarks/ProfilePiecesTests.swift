import Foundation
import GatewayTestSupport
import Testing

/// Benchmarks/load/profile_pieces.py, which splits a load run's perf profile
/// into pieces (docs/performance.md): each sample goes to the piece its own
/// function belongs to, a compiler-made wrapper (a suspend point, a
/// specialisation) to the function it wraps.
@Suite struct ProfilePiecesTests {
    @Test func eachSampleGoesToThePieceItsFunctionBelongsTo() async throws {
        let report = FileManager.default.temporaryDirectory.appending(path: "profile-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: report) }
        // As `perf report --no-children --sort dso,symbol --stdio` prints them, symbols mangled.
        let samples = [
            ("40.00%", "libcrypto.so.3", "[.]", "BN_mod_exp_mont_consttime"),
            ("20.00%", "identity-gateway", "[.]", "$s11Hummingbird10RouterTrieC7resolveyx5value_0A4Core14FlatDictionaryVyS2sG10parameterstSgSSF"),
            ("10.00%", "identity-gateway", "[.]", "$s11GatewayHTTP19RequestIDMiddlewareV6handle_7context4next15HummingbirdCore8ResponseVAG0C0V_0A9PluginKit0aC7ContextVAiK_ANtYaKXEtYaKF04$s15h5Core7c3V16ak7Kit0dC7m4VAA8J40Vs5Error_pIgHnnrzo_AcfHsAI_pIegHngozo_TRAknIs0U0_pIgHnnrzo_Tf1nncn_nTf4nndg_nTY0_"),
            ("10.00%", "identity-gateway", "[.]", "$s11GatewayHTTP18TokenRequestFieldsV9mediaType2ofS2S_tFZTf4nd_n"),
            ("10.00%", "[kernel.kallsyms]", "[k]", "finish_task_switch.isra.0"),
            ("10.00%", "libswiftCore.so", "[.]", "swift_retain"),
        ]
        let text = "# Samples: 1K of event 'cpu-clock:ppp'\n#\n"
            + samples.map { "    \($0.0)  \($0.1)  \($0.2) \($0.3)\n            |\n            ---caller\n" }.joined()
        try text.write(to: report, atomically: true, encoding: .utf8)

        let run = try await GatewayProcess.runProgram(
            "/usr/bin/python3", [Repository.path("Benchmarks/load/profile_pieces.py"), report.path, "1.0"],
            environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
        let lines = run.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first == "CPU a request by piece (1000 us in all; the samples' shares of it):")
        for expected in [
            "400.0 us   40.0 %  RSA signature and digest (libcrypto)",
            "200.0 us   20.0 %  Hummingbird (server, router, request, response)",
            "100.0 us   10.0 %  gateway: middlewares (request id, client address, metrics, access log, errors, 405)",
            "100.0 us   10.0 %  gateway: reading the request (strict JSON, app id)",
            "100.0 us   10.0 %  kernel (system calls, scheduling, loopback TCP)",
            "100.0 us   10.0 %  Swift runtime: reference counting",
        ] {
            #expect(lines.contains(expected), "\(expected) in:\n\(run.output)")
        }
        #expect(lines.count == 7, "\(run.output)")
    }
}
