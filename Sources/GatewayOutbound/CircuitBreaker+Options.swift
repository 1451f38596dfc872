public import GatewayCore
public import GatewayPluginKit

extension CircuitBreaker.Settings {
    /// Five failures in a row open the breaker for 30 s, unless the app's options say otherwise.
    public static var standard: Self { Self(failures: 5, coolDown: .seconds(30)) }
    public static var failureCounts: ClosedRange<Int> { 1...100 }
    public static var coolDownSeconds: ClosedRange<Int> { 1...3600 }

    /// Reads a plugin's `circuit_breaker` option, `{"failures": 1-100,
    /// "cool_down_seconds": 1-3600}`, either member left out taking
    /// ``standard``'s; the whole option left out is ``standard``. Every
    /// plugin that calls out (a webhook, an SMS sender) reads it here.
    public init(circuitBreakerIn options: JSONInput) throws(GatewayError) {
        guard let breaker = try options.object("circuit_breaker") else {
            self = .standard
            return
        }
        try breaker.rejectUnknown(allowed: ["failures", "cool_down_seconds"])
        self.init(
            failures: try breaker.integer("failures", in: Self.failureCounts) ?? Self.standard.failures,
            coolDown: try breaker.integer("cool_down_seconds", in: Self.coolDownSeconds).map { .seconds($0) }
                ?? Self.standard.coolDown)
    }
}

extension CircuitBreaker.Settings {
    /// The `circuit_breaker` option as plugins declare it (``OptionSchema``), published as `CircuitBreaker`.
    public static var option: OptionField {
        OptionField(
            "circuit_breaker",
            .component(
                OptionSchema(
                    name: "CircuitBreaker",
                    description:
                        "After failures calls in a row that failed on the other side (no connection, no answer in time, a 5xx), the app's calls fail fast for the cool-down; then one trial call decides. Per replica.",
                    fields: [
                        OptionField("failures", .integer(failureCounts, default: standard.failures)),
                        OptionField("cool_down_seconds", .integer(coolDownSeconds, default: 30)),
                    ])))
    }
}
