import Foundation

/// Trace export (`tracing.*`): off unless an OTLP/HTTP endpoint is given,
/// as `tracing.endpoint` or the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
/// / `OTEL_EXPORTER_OTLP_ENDPOINT`; `OTEL_SDK_DISABLED=true` or
/// `OTEL_TRACES_EXPORTER=none` keeps it off. swift-otel reads the other
/// `OTEL_*` variables it knows (service name, sampler, batch delay), and they
/// win over these settings.
struct TracingSettings: Sendable, Equatable {
    /// Where spans are POSTed: the full URL, e.g. `http://collector:4318/v1/traces`.
    var endpoint: String?
    /// The share of traces the gateway starts that are kept, 0...1; a trusted proxy's sampled flag wins.
    var sampleRatio = 1.0
    var serviceName = "identity-gateway"
    /// Whether spans may carry the user id (`enduser.id`).
    var recordsUserIDs = false
    /// Whether a trusted proxy's `traceparent`/`tracestate` continue its
    /// trace (its sampling decision with it). Off, every request starts a
    /// trace of its own: a proxy that passes its clients' headers through
    /// would otherwise let them force, hide or steer traces.
    var trustsIncomingParent = false
    /// How long one export may take before its spans are given up.
    var exportTimeoutMilliseconds = 5000

    /// Whether spans are exported at all.
    var isEnabled: Bool { endpoint != nil }

    init(_ settings: SettingsReader) {
        let environment = settings.environment
        let disabled =
            environment["OTEL_SDK_DISABLED"]?.lowercased() == "true"
            || environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none"
        // An empty value is unset (a compose file's `${GATEWAY_TRACING_ENDPOINT:-}`).
        func given(_ value: String?) -> String? { value?.isEmpty == false ? value : nil }
        let standardEndpoint =
            given(environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
            ?? given(environment["OTEL_EXPORTER_OTLP_ENDPOINT"]).map { $0.hasSuffix("/") ? $0 + "v1/traces" : $0 + "/v1/traces" }
        if let endpoint = given(settings.string("tracing.endpoint")) ?? standardEndpoint, !disabled {
            if let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil {
                self.endpoint = endpoint
            } else {
                settings.note("tracing.endpoint", "'\(endpoint)' is not an http(s) URL")
            }
        }
        if let text = settings.string("tracing.sample_ratio") {
            if let ratio = Double(text), (0...1).contains(ratio) { sampleRatio = ratio } else {
                settings.note("tracing.sample_ratio", "'\(text)' is not a number in 0...1")
            }
        }
        if let name = settings.string("tracing.service_name") {
            if name.isEmpty || name.utf8.count > 128 {
                settings.note("tracing.service_name", "1 to 128 bytes")
            } else {
                serviceName = name
            }
        }
        recordsUserIDs = settings.boolean("tracing.record_user_ids", default: recordsUserIDs)
        trustsIncomingParent = settings.boolean("tracing.trust_incoming_parent", default: trustsIncomingParent)
        exportTimeoutMilliseconds = settings.integer(
            "tracing.export_timeout_ms", in: 100...60_000, default: exportTimeoutMilliseconds)
    }
}
