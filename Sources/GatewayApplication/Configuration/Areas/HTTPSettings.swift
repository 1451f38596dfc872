public import NIOSSL

/// The public listener (`http.*`) and the metrics one (`metrics.port`).
public struct HTTPSettings: Sendable {
    public internal(set) var host = "127.0.0.1"
    public internal(set) var port = 8080
    /// A connection that sends no request part for this long is closed: idle
    /// keep-alive, or a request head trickled in (slowloris).
    public internal(set) var idleTimeoutSeconds = 75
    /// The slowest request body accepted, after a grace; 0 turns the rule off.
    public internal(set) var minimumBodyBytesPerSecond = 240
    public internal(set) var minimumBodyRateGraceSeconds = 5
    /// Native TLS on the HTTP port; `nil` serves plain HTTP (behind a terminating proxy).
    public internal(set) var tls: TLSConfiguration?
    /// A port of its own for `/metrics` (9090 in production unless set);
    /// `nil` serves it on the main port.
    public internal(set) var metricsPort: Int?

    /// The port `/metrics` gets in production when `metrics.port` is not set.
    public static let productionMetricsPort = 9090

    init(_ settings: SettingsReader, mode: DeploymentMode) {
        if let host = settings.string("http.host") { self.host = host }
        port = settings.integer("http.port", in: 0...65535, default: port)
        idleTimeoutSeconds = settings.integer("http.idle_timeout_seconds", in: 1...3600, default: idleTimeoutSeconds)
        minimumBodyBytesPerSecond = settings.integer(
            "http.min_body_bytes_per_second", in: 0...1_000_000, default: minimumBodyBytesPerSecond)
        minimumBodyRateGraceSeconds = settings.integer(
            "http.min_body_rate_grace_seconds", in: 1...300, default: minimumBodyRateGraceSeconds)
        let (certificate, key) = ("http.tls.certificate_file", "http.tls.key_file")
        switch (settings.string(certificate), settings.string(key)) {
        case (nil, nil):
            break
        case (let certificateFile?, let keyFile?):
            tls = ServerTLS.configuration(certificateFile: certificateFile, keyFile: keyFile, noting: settings)
        default:
            settings.noteLine(
                "\(certificate) and \(key) (\(SettingsReader.environmentName(certificate)), "
                    + "\(SettingsReader.environmentName(key))) go together: give both for TLS, or neither")
        }
        if settings.isSet("metrics.port") {
            metricsPort = settings.integer("metrics.port", in: 0...65535, default: Self.productionMetricsPort)
        } else if mode == .production {
            // Metrics name app ids: in production they stay off the public port unless told otherwise.
            metricsPort = Self.productionMetricsPort
        }
    }
}
