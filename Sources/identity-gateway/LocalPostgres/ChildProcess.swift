import Foundation
import GatewayCore

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with `posix_spawn` and `waitpid`.
///
/// `pg_ctl start` leaves a server running that inherits every open
/// descriptor not marked close-on-exec. Foundation's `Process` learns of an
/// exit through such a descriptor, and whoever reads our output through a
/// pipe waits for its last writer: both would wait as long as the server
/// runs. So output goes to a file, and the descriptors we inherited are
/// marked close-on-exec before anything is spawned.
enum ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Marks every open descriptor above standard error close-on-exec.
    private static func closeInheritedDescriptorsOnExec() {
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// Runs `executable` with `arguments`, feeding `input` on standard input;
    /// returns standard output and error together, or throws them on a
    /// non-zero exit.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> String {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "identity-gateway-\(UUID().lowercasedText)")
        let inputPath = scratch.path + ".in"
        let outputPath = scratch.path + ".out"
        try (input ?? Data()).write(to: URL(fileURLWithPath: inputPath))
        defer {
            try? FileManager.default.removeItem(atPath: inputPath)
            try? FileManager.default.removeItem(atPath: outputPath)
        }

        closeInheritedDescriptorsOnExec()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        // Start in "/": the child may run as another user (runuser) who
        // cannot enter our working directory.
        let shell = ["/bin/sh", "-c", #"cd / && exec "$0" "$@""#, executable] + arguments
        let argv = shell.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}

        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exitedCleanly = (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
        guard exitedCleanly else {
            let name = URL(fileURLWithPath: executable).lastPathComponent
            throw Failure(description: "\(name) failed: \(output.suffix(2000))")
        }
        return output
    }
}
