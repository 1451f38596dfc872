import Benchmark
import GatewayBenchmarkWorkloads

// The token hot path, step by step: each benchmark times one step a token
// request takes (GatewayBenchmarkWorkloads, which ./scripts/test builds and
// runs once); `swift package benchmark` prints time and allocations.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        maxDuration: .seconds(3), maxIterations: 100_000)

    for workload in try! TokenPathWorkloads.all() {
        let configuration: Benchmark.Configuration? =
            workload.isSlow ? .init(metrics: [.wallClock, .cpuTotal], maxDuration: .seconds(5), maxIterations: 200) : nil
        Benchmark(workload.name, configuration: configuration ?? Benchmark.defaultConfiguration) { benchmark in
            for _ in benchmark.scaledIterations { try workload.run() }
        }
    }
}
