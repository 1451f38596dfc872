import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and reaped by a blocking
/// `waitpid` on a thread of its own (``detachThread(_:)``).
///
/// Not Foundation's `Process`: with it, a test sometimes waited forever for
/// a child that had already exited (once in nine runs of CommandLineTests,
/// and once in a fresh-clone CI run). Its termination handler and its
/// readability handler rest on dispatch sources; `waitpid` on the child's
/// own pid cannot miss the exit.
final class SpawnedChild: Sendable {
    let pid: pid_t
    private let exited: AsyncStream<Void>
    private let status = ExitStatus()

    /// Set once, by the thread that reaps the child.
    private final class ExitStatus: Sendable {
        let value = Mutex<Int32?>(nil)
    }

    /// Starts `executable` with `arguments` and exactly `environment`;
    /// standard input is /dev/null and standard output and error both go to
    /// `output` (a descriptor, or a file path to create).
    init(executable: String, arguments: [String], environment: [String: String], output: Output) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        switch output {
        case .descriptor(let descriptor):
            posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        // The child starts with no signal blocked and SIGTERM and SIGINT at
        // their defaults: posix_spawn would pass on the test process's mask,
        // in which the test runtime blocks them, and a child that does not
        // unblock them itself (a Python helper) would never stop.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var spawnedPID: pid_t = 0
        let spawned = posix_spawn(&spawnedPID, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw GatewayProcess.Failure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        let pid = spawnedPID
        self.pid = pid

        let (exited, finish) = AsyncStream<Void>.makeStream()
        self.exited = exited
        let status = self.status
        detachThread {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1, errno == EINTR {}
            // Like Foundation: the exit code, or the number of the signal that ended it.
            let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
            status.value.withLock { $0 = code }
            finish.finish()
        }
    }

    /// What arrives on `descriptor` until every writer has closed it, read
    /// by blocking `read` calls on a thread of its own (not Foundation's
    /// `readabilityHandler`, which is built on a dispatch source); the
    /// descriptor is closed at the end.
    static func readUntilClosed(_ descriptor: Int32) -> AsyncStream<String> {
        let (chunks, continuation) = AsyncStream<String>.makeStream()
        detachThread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    continuation.yield(String(decoding: buffer[..<count], as: UTF8.self))
                } else if count == 0 || errno != EINTR {
                    break
                }
            }
            close(descriptor)
            continuation.finish()
        }
        return chunks
    }

    enum Output {
        case descriptor(Int32)
        case file(String)
    }

    var isRunning: Bool { status.value.withLock { $0 == nil } }

    /// Sends SIGTERM, unless the child was already reaped.
    func terminate() {
        if isRunning { kill(pid, SIGTERM) }
    }

    /// Runs `body` (a wait on this child); should `limit` pass first, the
    /// child is killed (SIGKILL), which ends the wait, and `timedOut` says so.
    /// Every wait on a child in the tests is bounded this way: an unbounded
    /// one that never ended held a CI run until its own limit, with nothing
    /// to say which test it was.
    func within<Value>(_ limit: Duration, _ body: () async throws -> Value) async rethrows -> (value: Value, timedOut: Bool) {
        let fired = Flag()
        let timer = Task { [pid, status] in
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            status.value.withLock { code in
                guard code == nil else { return }  // reaped: the pid may be another process's by now
                fired.value.store(true, ordering: .relaxed)
                kill(pid, SIGKILL)
            }
        }
        defer { timer.cancel() }
        let value = try await body()
        return (value, fired.value.load(ordering: .relaxed))
    }

    private final class Flag: Sendable {
        let value = Atomic(false)
    }

    /// Waits for the exit; the exit code, or the signal's number.
    func exitStatus() async -> Int32 {
        if let known = status.value.withLock({ $0 }) { return known }
        for await _ in exited {}
        return status.value.withLock { $0 } ?? -1
    }
}

/// Runs `body` on a new POSIX thread that ends with it.
///
/// Not Foundation's `Thread`: on Linux a `Thread` keeps the `pthread_t` of
/// a thread that has ended (swift-corelibs-foundation issue 5240: memory
/// damage), and a full test run starts and ends two threads for every child
/// process, hundreds in all. A run with such threads crashed on damaged
/// memory (a `PostgresRequestLedger` whose fields read as null, 2026-11-28);
/// whether they also explain the CI run that hung (stop 66) is not known.
/// The gateway's own threads never end.
func detachThread(_ body: @escaping @Sendable () -> Void) {
    final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
        &thread, &attributes,
        { context in
            Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, work)
    guard created == 0 else {
        Unmanaged<Work>.fromOpaque(work).release()
        fatalError("pthread_create failed: \(String(cString: strerror(created)))")
    }
}
