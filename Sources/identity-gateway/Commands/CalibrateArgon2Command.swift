import Argon2
import ArgumentParser
import Dispatch
import Foundation

/// Measures argon2id on this machine: the time of one hash for candidate
/// costs (to choose an app's `plugins.password.argon2`), or with
/// `--throughput-seconds`, how many verifications all cores do per second
/// (the ceiling for password logins, which the load benchmark compares with).
struct CalibrateArgon2Command: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate-argon2",
        abstract: "Measure argon2id hash times and throughput on this machine.")

    @Option(help: "The longest one hash may take, in milliseconds.")
    var targetMs: Double = 50

    @Option(help: "Measure verifications per second for this long instead of trying candidates.")
    var throughputSeconds: Double?

    @Option(help: "Threads for --throughput-seconds (default: one per core).")
    var threads: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "Memory (KiB) for --throughput-seconds.")
    var memoryKib: Int = Argon2Parameters.owasp.memoryKiB

    @Option(help: "Passes for --throughput-seconds.")
    var iterations: Int = Argon2Parameters.owasp.iterations

    func validate() throws {
        guard targetMs > 0 else { throw ValidationError("--target-ms must be positive") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard Argon2Parameters(memoryKiB: memoryKib, iterations: iterations).isWithinBounds else {
            throw ValidationError(
                "--memory-kib must be in \(Argon2Parameters.memoryKiBRange) and --iterations in \(Argon2Parameters.iterationsRange)")
        }
    }

    func run() throws {
        if let throughputSeconds {
            try measureThroughput(seconds: throughputSeconds)
        } else {
            try calibrate()
        }
    }

    /// One hash per candidate, median of three, cheapest first; recommends
    /// the costliest candidate within the target.
    private func calibrate() throws {
        var best: (parameters: Argon2Parameters, milliseconds: Double)?
        print("argon2id, one hash, median of 3 (target \(targetMs) ms):")
        for memory in [19_456, 32_768, 65_536, 131_072, 262_144] {
            for passes in 1...4 {
                let parameters = Argon2Parameters(memoryKiB: memory, iterations: passes)
                let times = try (0..<3).map { _ in try Self.milliseconds { _ = try Argon2.hash("calibration", parameters: parameters) } }
                let median = times.sorted()[1]
                let fits = median <= targetMs
                print("  m=\(memory) KiB t=\(passes): \(String(format: "%.1f", median)) ms\(fits ? "" : "  (over)")")
                if fits, memory * passes >= (best.map { $0.parameters.memoryKiB * $0.parameters.iterations } ?? 0) {
                    best = (parameters, median)
                }
            }
        }
        guard let best else {
            print("no candidate fits in \(targetMs) ms; OWASP's minimum (m=19456, t=2) is still the floor to use")
            return
        }
        print(
            "recommended: {\"argon2\": {\"memory_kib\": \(best.parameters.memoryKiB), \"iterations\": \(best.parameters.iterations)}}"
                + " (\(String(format: "%.1f", best.milliseconds)) ms a hash)")
    }

    /// Verifications per second on `threads` threads, each verifying one
    /// stored hash in a loop until the time is up.
    private func measureThroughput(seconds: Double) throws {
        let parameters = Argon2Parameters(memoryKiB: memoryKib, iterations: iterations)
        let hash = try Argon2.hash("throughput", parameters: parameters)
        let counts = Counts(threads: threads)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let start = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var done = 0
            while DispatchTime.now().uptimeNanoseconds < deadline {
                if (try? Argon2.verify("throughput", against: hash)) == true { done += 1 }
            }
            counts.set(thread, done)
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let total = counts.total
        let perSecond = Double(total) / elapsed
        print(
            "argon2id \(parameters) verify: \(total) in \(String(format: "%.2f", elapsed)) s on \(threads) thread(s): "
                + "\(String(format: "%.1f", perSecond))/s, \(String(format: "%.2f", elapsed * 1000 * Double(threads) / Double(total))) ms each")
        print(
            "{\"threads\":\(threads),\"memory_kib\":\(memoryKib),\"iterations\":\(iterations),"
                + "\"verifications_per_second\":\(String(format: "%.1f", perSecond))}")
    }

    private static func milliseconds(_ work: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try work()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    /// Per-thread counts, each slot written by one thread once.
    private final class Counts: @unchecked Sendable {
        private var values: [Int]
        private let lock = NSLock()
        init(threads: Int) { values = Array(repeating: 0, count: threads) }
        func set(_ index: Int, _ value: Int) { lock.withLock { values[index] = value } }
        var total: Int { lock.withLock { values.reduce(0, +) } }
    }
}
