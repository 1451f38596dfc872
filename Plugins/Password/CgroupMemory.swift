import Foundation

/// The memory limit of the process's cgroup (a container's limit), if any:
/// cgroup v2's `memory.max`, else v1's `memory.limit_in_bytes`.
enum CgroupMemory {
    static func limitBytes() -> UInt64? {
        for path in ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            // "max", or v1's "no limit" (a number near 2^63), mean none.
            guard let bytes = UInt64(value), bytes < 1 << 60 else { return nil }
            return bytes
        }
        return nil
    }
}
