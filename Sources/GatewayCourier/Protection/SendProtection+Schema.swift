public import GatewayPluginKit

extension SendProtection {
    /// `send_protection`, declared once for every channel (SMS, email): what
    /// a type can say. Which members a channel takes (countries and the
    /// breaker are SMS's), known countries, and who may loosen it,
    /// ``SendProtection`` and the plugins check.
    public static let schema = OptionSchema(
        name: "SendProtection",
        description:
            "A channel's protection against abuse (docs/plugins.md, \"Send protection\"). An app admin may tighten it; loosening it needs an operator token. countries and breaker are for SMS only.",
        fields: [
            OptionField("human_check", .component(humanCheck)),
            OptionField(
                "countries",
                .oneMemberOf([
                    OptionField("allow", .list(of: country, count: 0...300)),
                    OptionField("deny", .list(of: country, count: 0...300)),
                ]),
                description:
                    "The countries a code may go to, from the number's calling code (ISO 3166 alpha-2; 001 for non-geographic codes such as +881 and +882). Refused: 403 phone_number_not_allowed."
            ),
            OptionField(
                "breaker",
                .offOr(
                    .object([
                        OptionField(
                            "prefix_digits", .integer(Breaker.prefixLengths, default: 6),
                            description: "Leading digits (after +) a prefix is counted by."),
                        OptionField(
                            "minimum_sends", .integer(Breaker.minimums, default: 50), description: "Sends a window always allows a prefix."),
                        OptionField(
                            "surge_factor", .integer(Breaker.factors, default: 4),
                            description: "A window allows this times the prefix's average over the 24 windows before, when that is more."),
                        OptionField("window_seconds", .integer(Breaker.windows, default: 3600)),
                        OptionField(
                            "open_seconds", .integer(Breaker.openings, default: 43_200),
                            description: "How long a tripped breaker refuses sends to its prefix."),
                    ])),
                description: "The pumping breaker (on by default for SMS; false turns it off)."),
        ])

    /// A CAPTCHA asked before a code is sent (or a password checked): the
    /// password plugin's `human_check` is the same shape.
    public static let humanCheck = OptionSchema(
        name: "HumanCheck",
        description: "A CAPTCHA (Cloudflare Turnstile or hCaptcha) asked before the send or the check (docs/plugins.md, \"Send protection\").",
        fields: [
                    OptionField("provider", .choice(["turnstile", "hcaptcha"]), required: true),
                    OptionField("secret", .secret(8...256), required: true, description: "The provider's secret key. Write-only."),
                    OptionField("site_key", .text(TextRule(length: 1...128)), description: "Sent to hCaptcha as sitekey."),
                    OptionField(
                        "hostnames", .list(of: .text(maximumLength: 253), count: 1...20), required: true,
                        description: "The host names a solved check may come from (the answer's hostname)."),
                    OptionField(
                        "action", .text(TextRule(length: 1...32)), description: "The widget's action the answer must carry (Turnstile)."),
                    OptionField("mode", .choice(["always", "when_risky"], default: "always")),
                    OptionField(
                        "risky_after_sends", .integer(HumanCheck.riskySendRange, default: 3),
                        description:
                            "when_risky: a check is asked once the client address, the prefix or the app made this many sends in the window."),
                    OptionField("risky_window_seconds", .integer(HumanCheck.riskyWindows, default: 3600)),
                    OptionField(
                        "fail_open", .boolean(default: false),
                        description: "Send (audited) when the provider cannot be asked; by default answer 503 human_check_unavailable."),
                    OptionField("timeout_ms", .integer(HumanCheck.timeouts, default: 3000)),
                    OptionField(
                        "verify_url", .url, operatorOnly: true, destination: true,
                        description: "The provider's siteverify unless an operator points it elsewhere."),
        ])

    private static let country = OptionShape.text(
        TextRule(pattern: ("^([A-Za-z]{2}|001)$", meaning: "an ISO 3166 alpha-2 country code, or 001")))
}
