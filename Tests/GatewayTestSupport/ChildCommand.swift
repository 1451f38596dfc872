import Foundation

/// A short command a test runs (openssl, say), waited for without holding a
/// thread of the cooperative pool: a blocking wait there starves every other
/// test of a 2-core machine for as long as the command runs.
public enum ChildCommand {
    /// Runs `executable` with `arguments`, its output discarded; its exit status.
    public static func exitStatus(_ executable: String, _ arguments: [String]) async throws -> Int32 {
        let child = try SpawnedChild(
            executable: executable, arguments: arguments, environment: ProcessInfo.processInfo.environment,
            output: .file("/dev/null"))
        let (status, timedOut) = await child.within(GatewayProcess.Limits.run) { await child.exitStatus() }
        guard !timedOut else {
            throw GatewayProcess.Failure(description: "\(executable) \(arguments.joined(separator: " ")) did not exit within \(GatewayProcess.Limits.run) (killed)")
        }
        return status
    }
}
