import CoreMetrics
import GatewayCore
import GatewayHTTP
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Trace export: swift-otel's tracer, batch processor and OTLP/HTTP exporter,
/// bootstrapped as the process's tracer when `tracing.endpoint` is set.
///
/// The exporter runs beside the requests and never in their way: a finished
/// span goes to a bounded queue (2 048 spans) and is sent in batches; when the
/// queue is full, or an export fails or passes its timeout (the collector is
/// down), those spans are dropped and counted in
/// `gateway_trace_spans_dropped_total`.
enum TraceExport {
    /// The service that sends the spans, and the server-span middleware for the router.
    static func start(
        _ settings: TracingSettings, trustedProxies: [CIDR], logger: Logger
    ) throws -> (service: any Service, serverSpans: ServerSpanMiddleware)? {
        guard let endpoint = settings.endpoint else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = settings.serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.endpoint = endpoint
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.timeout = .milliseconds(settings.exportTimeoutMilliseconds)
        configuration.traces.batchSpanProcessor.exportTimeout = .milliseconds(settings.exportTimeoutMilliseconds)
        configuration.traces.sampler = .parentBasedTraceIDRatio(ratio: settings.sampleRatio) ?? .parentBasedAlwaysOn
        configuration.propagators = [.traceContext]
        configuration.diagnosticLogger = .custom(
            Logger(label: "otel") { _ in DroppedSpanCounter(forwardingTo: logger) })
        let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracer)
        Spans.recordsUserIDs = settings.recordsUserIDs
        logger.info(
            "exporting traces",
            metadata: [
                "endpoint": "\(endpoint)", "sample_ratio": "\(settings.sampleRatio)",
                "service_name": "\(settings.serviceName)", "trust_incoming_parent": "\(settings.trustsIncomingParent)",
            ])
        let middleware = ServerSpanMiddleware(parentsFrom: settings.trustsIncomingParent ? trustedProxies : []) {
            $0.otelTraceID
        }
        return (service, middleware)
    }
}

/// swift-otel's diagnostic log, read for the spans it gives up: its batch
/// processor warns with `dropped_count` when its queue was full and with
/// `batch_size` when an export failed. Those become
/// `gateway_trace_spans_dropped_total{reason}`; warnings and errors are
/// passed on to the gateway's log.
struct DroppedSpanCounter: LogHandler {
    private let forward: Logger
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    init(forwardingTo logger: Logger) {
        var logger = logger
        logger[metadataKey: "component"] = "trace-export"
        self.forward = logger
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if let dropped = all["dropped_count"].flatMap({ Int("\($0)") }) {
            Self.count(dropped, reason: "queue_full")
        } else if event.message.description.hasPrefix("Failed to export"), let lost = all["batch_size"].flatMap({ Int("\($0)") }) {
            Self.count(lost, reason: "export_failed")
        }
        if event.level >= .warning {
            forward.log(level: event.level, event.message, metadata: event.metadata)
        }
    }

    private static func count(_ spans: Int, reason: String) {
        Counter(label: "gateway_trace_spans_dropped_total", dimensions: [("reason", reason)]).increment(by: spans)
    }
}
