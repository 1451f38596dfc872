import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// What `INSTRUCTIONS=1 Benchmarks/load/run` builds on: the reader of
/// callgrind's dump (Benchmarks/load/callgrind_objects.py) and the
/// `dispatch_main` the Swift servers run with under valgrind
/// (Benchmarks/load/dispatch_main_shim.c). Valgrind itself is fetched by the
/// script and runs only there.
@Suite struct InstructionCountTests {

    /// Each object's self cost counts once: a callee's inclusive cost (the
    /// line after `calls=`) is skipped, names given once by number are
    /// followed, and the signing library is every object its pattern names.
    @Test func eachObjectCountsItsOwnInstructionsOnce() async throws {
        let dump = FileManager.default.temporaryDirectory.appending(path: "callgrind-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: dump) }
        try """
            # callgrind format
            version: 1
            positions: line
            events: Ir
            summary: 9000000

            ob=(1) /usr/lib/x86_64-linux-gnu/libcrypto.so.3
            fl=(1) rsa.c
            fn=(1) RSA_sign
            10 5000000

            ob=(2) /srv/identity-gateway
            fl=(2) Handler.swift
            fn=(2) handle
            20 1000000
            +2 500000
            cob=(1)
            cfn=(1)
            calls=1 10
            22 5000000
            * 500000

            ob=(1)
            fn=(3) EVP_DigestSign
            30 2000000

            totals: 9000000
            """.write(to: dump, atomically: true, encoding: .utf8)

        let run = try await GatewayProcess.runProgram(
            "/usr/bin/python3",
            [Repository.path("Benchmarks/load/callgrind_objects.py"), dump.path, "2", #"libcrypto\.so"#],
            environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
        let lines = run.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        // 9 M in two requests: 7 M of them in libcrypto, 2 M in the gateway.
        #expect(lines.first == "4.500 3.500 1.000", "\(run.output)")
        #expect(lines.contains("3.500 M  /usr/lib/x86_64-linux-gnu/libcrypto.so.3"), "\(run.output)")
        #expect(lines.contains("1.000 M  /srv/identity-gateway"), "\(run.output)")
    }

    /// Work queued on the main queue before `dispatch_main` runs, on the
    /// main thread itself: the shim serves the queue where the real one
    /// hands it to a worker thread and parks the main thread.
    @Test func theShimServesTheMainQueueOnTheMainThread() async throws {
        try await Self.withShim { folder, shim, swiftLibraries in
            let program = folder.appending(path: "main_queue.c")
            try """
                #define _GNU_SOURCE
                #include <stdio.h>
                #include <stdlib.h>
                #include <unistd.h>
                extern struct dispatch_queue_s _dispatch_main_q;
                extern void dispatch_async_f(void *queue, void *context, void (*work)(void *));
                extern void dispatch_main(void);
                static void work(void *context) {
                    printf("served on the %s thread\\n", gettid() == getpid() ? "main" : "another");
                    exit(0);
                }
                int main(void) {
                    dispatch_async_f(&_dispatch_main_q, NULL, work);
                    dispatch_main();
                }
                """.write(to: program, atomically: true, encoding: .utf8)
            let binary = folder.appending(path: "main_queue")
            try await Self.compile([program.path, "-o", binary.path, "-L\(swiftLibraries)", "-Wl,-rpath,\(swiftLibraries)", "-ldispatch"])
            let run = try await GatewayProcess.runProgram(
                binary.path, [], environment: ["LD_PRELOAD": shim.path], limit: .seconds(30))
            #expect(run.status == 0 && run.output == "served on the main thread\n", "\(run.output)")
        }
    }

    /// With the shim preloaded, a Swift server whose async main ends in
    /// `dispatch_main` starts, answers, and stops on SIGTERM with status 0.
    @Test func aSwiftServerRunsAndStopsWithTheShim() async throws {
        try await Self.withShim { folder, shim, _ in
            let floor = try GatewayProcess.binary().deletingLastPathComponent().appending(path: "token-floor")
            let key = folder.appending(path: "key.pem")
            try RSAKeyPair.generate(bits: 2048).privateKeyPEM.write(to: key, atomically: true, encoding: .utf8)
            let server = try await GatewayProcess.startHelper(
                floor.path, [], environment: ["FLOOR_KEY_FILE": key.path, "FLOOR_PORT": "0", "LD_PRELOAD": shim.path])
            let answer = try await HTTPCall.send(
                "POST", "http://127.0.0.1:\(server.port)/v1/identity_tokens",
                json: ["app_id": UUID().uuidString, "user_id": "ada", "nonce": "n-1"])
            #expect(answer.status == 200 && answer.text.contains("identity_token"), "\(answer.text)")
            #expect(await server.stop() == 0, "\(server.printed)")
        }
    }

    /// Builds the shim in a fresh folder, against the libdispatch the gateway loads.
    static func withShim(_ body: (_ folder: URL, _ shim: URL, _ swiftLibraries: String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "dispatch-shim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let swiftLibraries = try await libdispatchFolder(of: try GatewayProcess.binary().path)
        let shim = folder.appending(path: "dispatch_main_shim.so")
        try await compile([
            "-shared", "-fPIC", "-o", shim.path, Repository.path("Benchmarks/load/dispatch_main_shim.c"),
            "-L\(swiftLibraries)", "-Wl,-rpath,\(swiftLibraries)", "-ldispatch",
        ])
        try await body(folder, shim, swiftLibraries)
    }

    /// The Swift toolchain's clang, warnings as errors.
    static func compile(_ arguments: [String]) async throws {
        let run = try await GatewayProcess.runProgram(
            "/usr/bin/env", ["clang", "-O2", "-Wall", "-Werror"] + arguments, environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
    }

    /// The folder of the libdispatch the binary loads (the Swift toolchain's).
    static func libdispatchFolder(of binary: String) async throws -> String {
        let ldd = try await GatewayProcess.runProgram("/usr/bin/ldd", [binary], environment: ProcessInfo.processInfo.environment)
        let line = try #require(ldd.output.split(separator: "\n").first { $0.contains("libdispatch.so =>") }, "\(ldd.output)")
        let path = try #require(line.split(separator: " ").first { $0.hasPrefix("/") }, "\(line)")
        return URL(fileURLWithPath: String(path)).deletingLastPathComponent().path
    }
}
