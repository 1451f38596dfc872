import CoreMetrics
import Prometheus
import Synchronization

/// The process's metrics backend: swift-metrics into one Prometheus registry,
/// bootstrapped once per process.
enum GatewayMetrics {
    private static let registry = Mutex<PrometheusCollectorRegistry?>(nil)

    /// The registry `/metrics` renders; the first call bootstraps swift-metrics.
    static func bootstrap() -> PrometheusCollectorRegistry {
        registry.withLock { existing in
            if let existing { return existing }
            let created = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: created))
            existing = created
            return created
        }
    }
}
