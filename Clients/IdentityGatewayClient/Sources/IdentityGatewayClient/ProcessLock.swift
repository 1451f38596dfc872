import Foundation

/// An exclusive `flock` on a file, held across an `await`: how clients in
/// several processes (and several clients in one) over one session store
/// take turns. Taken without blocking a thread: a lock another holder has
/// is tried again every few milliseconds.
struct ProcessLock: Sendable {
    let url: URL

    func holding<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let descriptor = open(url.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            try await Task.sleep(for: .milliseconds(5))
        }
        // Closing the descriptor releases the lock.
        return try await body()
    }
}
