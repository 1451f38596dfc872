public import Foundation
import GatewayPostgres
import Synchronization
import Testing

/// The built `identity-gateway` binary run as a child process, the way an
/// operator runs it. Its path comes from `GATEWAY_TEST_BINARY`, set by
/// `./scripts/test`.
public final class GatewayProcess: Sendable {
    public struct Exit: Sendable {
        public let status: Int32
        /// Standard output and standard error together.
        public let output: String

        /// ``output`` without its JSON log lines: what the command said to
        /// its operator. A server that fails to start still logs from its
        /// other threads as it stops, and such a line may land in the
        /// middle of the message.
        public var messages: String {
            output.replacing(#/\{"time":"[^"]*","level":.*?\}\n?/#, with: "")
        }
    }

    private let child: SpawnedChild
    private let output = Mutex<String>("")
    /// Copies the child's output into `output` until it closes it.
    private let reader = Mutex<Task<Void, Never>?>(nil)

    /// The port the server reported listening on.
    /// The first server's port; ``ports`` has every one that was waited for.
    public let port: Int
    public let ports: [Int]
    /// The child's process id, for reading its resource use in /proc.
    public var pid: Int32 { child.pid }

    public static func binary() throws -> URL {
        URL(fileURLWithPath: try SuiteEnvironment.value("GATEWAY_TEST_BINARY"))
    }

    /// Runs the binary to completion. The child sees only `environment` plus PATH and HOME.
    ///
    /// Output is collected in a file, not a pipe: a command that starts a
    /// daemon (`local-postgres start`) would leave the pipe open forever.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Exit {
        try await runProgram(try binary().path, arguments, environment: childEnvironment(environment))
    }

    /// Runs any program to completion with exactly `environment`, and
    /// returns its exit status and everything it printed; past `limit` it
    /// is killed and this throws.
    public static func runProgram(
        _ executable: String, _ arguments: [String], environment: [String: String], limit: Duration = Limits.run
    ) async throws -> Exit {
        let outputURL = FileManager.default.temporaryDirectory.appending(path: "gateway-output-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let child = try SpawnedChild(
            executable: executable, arguments: arguments, environment: environment, output: .file(outputURL.path))
        let (status, timedOut) = await child.within(limit) { await child.exitStatus() }
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        guard !timedOut else {
            throw Failure(description: "\(executable) \(arguments.first ?? "") did not exit within \(limit) (killed):\n\(text)")
        }
        return Exit(status: status, output: text)
    }

    /// How long a child may take; past it, it is killed and the test fails
    /// saying which child and what it printed. Far above what a loaded
    /// two-core machine needs, well below CI's limit for the whole run.
    public enum Limits {
        /// A command, from start to exit (a longer one passes its own).
        public static let run = Duration.seconds(300)
        /// A server or helper, from start to the lines saying it is ready.
        public static let start = Duration.seconds(120)
        /// A server, from SIGTERM to exit: the gateway's own grace (30 s
        /// unless set) and drain, and then some.
        public static let stop = Duration.seconds(120)
    }

    /// Starts `serve` and returns once it logs that `listeners` servers listen
    /// (their ports in ``ports``, in the order logged) and that its
    /// app-change listener is connected, so `/readyz` answers 200 from then
    /// on while the database does; throws with its output if it exits first.
    public static func start(
        _ arguments: [String], environment: [String: String], listeners: Int = 1
    ) async throws -> GatewayProcess {
        // The "listening" lines are logged at info: above that this would wait forever.
        if let level = environment["GATEWAY_LOG_LEVEL"], ["warning", "error", "critical"].contains(level) {
            throw Failure(description: "GATEWAY_LOG_LEVEL=\(level) hides the lines start() waits for; use info or lower")
        }
        return try await launch(try binary().path, arguments, environment: environment) { seen in
            listeningPorts(in: seen).count >= listeners && seen.contains(AppChangeListener.listeningLine)
        }
    }

    /// Starts a helper program (a stand-in for a service we do not own) and
    /// returns once it prints `listening on 127.0.0.1:<port>`. Helpers start
    /// one at a time: a Python helper's imports take a core for a second or
    /// more, and a dozen starting together (the ID-token suites, which need
    /// no database and so all begin at once) starved the servers other tests
    /// time, for up to 10 s in a full run.
    public static func startHelper(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> GatewayProcess {
        await HelperStarts.shared.take()
        do {
            let process = try await launch(executable, arguments, environment: environment) { !listeningPorts(in: $0).isEmpty }
            await HelperStarts.shared.give()
            return process
        } catch {
            await HelperStarts.shared.give()
            throw error
        }
    }

    private static func launch(
        _ executable: String, _ arguments: [String], environment: [String: String], isReady: (String) -> Bool
    ) async throws -> GatewayProcess {
        // A socket pair rather than a pipe, because both ends can be made
        // close-on-exec at birth (Glibc's module does not offer pipe2): no
        // process another test spawns meanwhile can inherit the write end and
        // hold off the end-of-output. The child gets its copy as stdout and
        // stderr, which are not close-on-exec.
        var descriptors: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else {
            throw Failure(description: "socketpair failed: errno \(errno)")
        }
        let child: SpawnedChild
        do {
            defer { close(descriptors[1]) }
            child = try SpawnedChild(
                executable: executable, arguments: arguments, environment: childEnvironment(environment),
                output: .descriptor(descriptors[1]))
        } catch {
            close(descriptors[0])
            throw error
        }
        let lines = SpawnedChild.readUntilClosed(descriptors[0])

        var seen = ""
        let (ready, timedOut) = await child.within(Limits.start) { () -> Bool in
            for await chunk in lines {
                seen += chunk
                if isReady(seen) { return true }
            }
            return false
        }
        guard ready else {
            let why = timedOut ? "was not ready within \(Limits.start) (killed)" : "exited (\(await child.exitStatus())) before listening"
            throw Failure(description: "\(executable) \(why):\n\(seen)")
        }
        let server = GatewayProcess(child: child, ports: listeningPorts(in: seen), seen: seen)
        let reader = Task { for await chunk in lines { server.output.withLock { $0 += chunk } } }
        server.reader.withLock { $0 = reader }
        return server
    }

    private init(child: SpawnedChild, ports: [Int], seen: String) {
        self.child = child
        self.port = ports[0]
        self.ports = ports
        self.output.withLock { $0 = seen }
    }

    /// What the server printed so far.
    public var printed: String { output.withLock { $0 } }

    /// Sends SIGTERM (unless the child already exited) and waits for the
    /// exit status and the last of the output. A child still running
    /// ``Limits/stop`` later is killed and the test fails: a server must
    /// stop when told to.
    @discardableResult
    public func stop() async -> Int32 {
        child.terminate()
        let (status, timedOut) = await child.within(Limits.stop) { await child.exitStatus() }
        await reader.withLock { $0 }?.value
        if timedOut {
            Issue.record("the child \(child.pid) did not exit within \(Limits.stop) of SIGTERM (killed); it printed:\n\(printed.suffix(20_000))")
        }
        return status
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `environment` plus PATH and HOME, and a compact crash report.
    private static func childEnvironment(_ environment: [String: String]) -> [String: String] {
        var childEnvironment = environment
        for name in ["PATH", "HOME"] { childEnvironment[name] = ProcessInfo.processInfo.environment[name] }
        // Should a gateway crash, its report is the crashed thread alone, on standard error with the rest of
        // its log, so the cause fits in the log excerpt a failing test records.
        childEnvironment["SWIFT_BACKTRACE"] =
            "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,output-to=stderr"
        return childEnvironment
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

/// One helper start at a time, in the order they asked.
private actor HelperStarts {
    static let shared = HelperStarts()
    private var starting = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func take() async {
        guard starting else {
            starting = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty { starting = false } else { waiting.removeFirst().resume() }
    }
}
