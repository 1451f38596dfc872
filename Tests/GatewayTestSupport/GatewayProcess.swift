public import Foundation
import Synchronization

/// The built `identity-gateway` binary run as a child process, the way an
/// operator runs it. Its path comes from `GATEWAY_TEST_BINARY`, set by
/// `./scripts/test`.
public final class GatewayProcess: Sendable {
    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String { "GATEWAY_TEST_BINARY is not set: run the tests with ./scripts/test" }
    }

    public struct Exit: Sendable {
        public let status: Int32
        /// Standard output and standard error together.
        public let output: String
    }

    private let process: Process
    private let output = Mutex<String>("")
    /// Copies the child's output into `output` until it closes it.
    private let reader = Mutex<Task<Void, Never>?>(nil)

    /// The port the server reported listening on.
    /// The first server's port; ``ports`` has every one that was waited for.
    public let port: Int
    public let ports: [Int]

    public static func binary() throws -> URL {
        guard let path = ProcessInfo.processInfo.environment["GATEWAY_TEST_BINARY"], !path.isEmpty else {
            throw NotConfigured()
        }
        return URL(fileURLWithPath: path)
    }

    /// Runs the binary to completion. The child sees only `environment` plus PATH and HOME.
    ///
    /// Output is collected in a file, not a pipe: a command that starts a
    /// daemon (`local-postgres start`) would leave the pipe open forever.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Exit {
        let process = try makeProcess(arguments, environment: environment)
        let outputURL = FileManager.default.temporaryDirectory.appending(path: "gateway-output-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
            throw Failure(description: "cannot create \(outputURL.path)")
        }
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return Exit(status: process.terminationStatus, output: text)
    }

    /// Starts `serve` (or another server command) and returns once it logs
    /// that `listeners` servers listen (their ports in ``ports``, in the
    /// order logged), or throws with its output if it exits first.
    public static func start(
        _ arguments: [String], environment: [String: String], listeners: Int = 1
    ) async throws -> GatewayProcess {
        let process = try makeProcess(arguments, environment: environment)
        let pipe = Pipe()
        // Not inherited by gateways started next to this one: a sibling holding
        // this pipe open would keep its end-of-output from ever arriving.
        for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        process.standardOutput = pipe
        process.standardError = pipe
        let (lines, continuation) = AsyncStream<String>.makeStream()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                continuation.finish()
            } else {
                continuation.yield(String(decoding: data, as: UTF8.self))
            }
        }
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()

        var seen = ""
        for await chunk in lines {
            seen += chunk
            let ports = listeningPorts(in: seen)
            if ports.count >= listeners {
                let server = GatewayProcess(process: process, ports: ports, seen: seen)
                let reader = Task { for await chunk in lines { server.output.withLock { $0 += chunk } } }
                server.reader.withLock { $0 = reader }
                return server
            }
        }
        process.waitUntilExit()
        throw Failure(description: "the gateway exited (\(process.terminationStatus)) before listening:\n\(seen)")
    }

    private init(process: Process, ports: [Int], seen: String) {
        self.process = process
        self.port = ports[0]
        self.ports = ports
        self.output.withLock { $0 = seen }
    }

    /// What the server printed so far.
    public var printed: String { output.withLock { $0 } }

    /// Sends SIGTERM and waits for the exit status and the last of the output.
    @discardableResult
    public func stop() async -> Int32 {
        let process = self.process
        let status = await withCheckedContinuation { continuation in
            if !process.isRunning {
                continuation.resume(returning: process.terminationStatus)
                return
            }
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            process.terminate()
        }
        await reader.withLock { $0 }?.value
        return status
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private static func makeProcess(_ arguments: [String], environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        var childEnvironment = environment
        for name in ["PATH", "HOME"] { childEnvironment[name] = ProcessInfo.processInfo.environment[name] }
        process.environment = childEnvironment
        return process
    }

    private static func listeningPorts(in text: String) -> [Int] {
        var ports: [Int] = []
        var rest = text[...]
        while let range = rest.range(of: "listening on 127.0.0.1:") {
            if let port = Int(rest[range.upperBound...].prefix { $0.isNumber }) { ports.append(port) }
            rest = rest[range.upperBound...]
        }
        return ports
    }
}
