import Configuration
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
    /// How long one export may take before its spans are given up.
    var exportTimeoutMilliseconds = 5000

    /// Whether spans are exported at all.
    var isEnabled: Bool { endpoint != nil }

    init() {}

    init(reader: ConfigReader, environment: [String: String], problems: inout [String]) {
        let disabled =
            environment["OTEL_SDK_DISABLED"]?.lowercased() == "true"
            || environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none"
        // An empty value is unset (a compose file's `${GATEWAY_TRACING_ENDPOINT:-}`).
        func given(_ value: String?) -> String? { value?.isEmpty == false ? value : nil }
        let standardEndpoint =
            given(environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
            ?? given(environment["OTEL_EXPORTER_OTLP_ENDPOINT"]).map { $0.hasSuffix("/") ? $0 + "v1/traces" : $0 + "/v1/traces" }
        if let endpoint = given(reader.string(forKey: "tracing.endpoint")) ?? standardEndpoint, !disabled {
            if let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil {
                self.endpoint = endpoint
            } else {
                problems.append("tracing.endpoint (GATEWAY_TRACING_ENDPOINT): '\(endpoint)' is not an http(s) URL")
            }
        }
        if let text = reader.string(forKey: "tracing.sample_ratio") {
            if let ratio = Double(text), (0...1).contains(ratio) { sampleRatio = ratio } else {
                problems.append("tracing.sample_ratio (GATEWAY_TRACING_SAMPLE_RATIO): '\(text)' is not a number in 0...1")
            }
        }
        if let name = reader.string(forKey: "tracing.service_name") {
            if name.isEmpty || name.utf8.count > 128 {
                problems.append("tracing.service_name (GATEWAY_TRACING_SERVICE_NAME): 1 to 128 bytes")
            } else {
                serviceName = name
            }
        }
        recordsUserIDs = GatewayConfiguration.boolean(
            reader, "tracing.record_user_ids", env: "GATEWAY_TRACING_RECORD_USER_IDS", default: false, &problems)
        exportTimeoutMilliseconds = GatewayConfiguration.integer(
            reader, "tracing.export_timeout_ms", env: "GATEWAY_TRACING_EXPORT_TIMEOUT_MS", in: 100...60_000,
            default: 5000, &problems)
    }
}
