import Argon2
import GatewayCore
import GatewayCourier
import GatewayPluginKit

/// An app's options for the password plugin (`plugins.password`), read
/// strictly: an unknown key or a value out of bounds is a 400 naming it.
///
/// ```json
/// {"argon2": {"memory_kib": 19456, "iterations": 2}, "min_length": 8}
/// ```
///
/// `human_check` asks a CAPTCHA on every password sign-in (or only risky
/// ones), as send protection's does before a code is sent (``SendProtection``).
struct PasswordOptions: Sendable, Equatable {
    /// The shortest password anyone may set; apps may only raise it.
    static let minimumLengthFloor = 8
    static let minimumLengthCeiling = 128

    /// The options as declared once (``OptionSchema``); ``init(_:hashLimits:)`` adds the operator's argon2 ceiling.
    static let schema = OptionSchema(
        name: "PasswordOptions", description: "Passwords in the app's user directory (docs/plugins.md, \"Passwords\").",
        fields: [
            OptionField(
                "argon2",
                .object([
                    OptionField("memory_kib", .integer(Argon2Parameters.memoryKiBRange, default: Argon2Parameters.owasp.memoryKiB)),
                    OptionField("iterations", .integer(Argon2Parameters.iterationsRange, default: Argon2Parameters.owasp.iterations)),
                ]),
                description: "The cost of new hashes, at most the operator's ceiling (password.max_memory_kib, password.max_iterations)."),
            OptionField("min_length", .integer(minimumLengthFloor...minimumLengthCeiling, default: minimumLengthFloor)),
            OptionField(
                "human_check", .component(SendProtection.humanCheck),
                description:
                    "A CAPTCHA every sign-in passes before its password is checked (credentials.captcha_token); the operator's to loosen."),
        ])

    /// The cost of new hashes, and of the comparison for unknown users.
    let argon2: Argon2Parameters
    /// Characters a new password needs at least.
    let minimumLength: Int
    /// The operator's ceiling on argon2 cost, which imported hashes must fit too.
    let hashLimits: PasswordHasher.Limits
    /// The human check a sign-in passes before its password is checked; nil, none.
    var humanCheck: SendProtection.HumanCheck?

    init(
        argon2: Argon2Parameters = .owasp, minimumLength: Int = minimumLengthFloor,
        hashLimits: PasswordHasher.Limits = PasswordHasher.Limits()
    ) {
        self.argon2 = argon2
        self.minimumLength = minimumLength
        self.hashLimits = hashLimits
    }

    /// Reads the options; an argon2 cost above the operator's ceiling (`hashLimits`) is a 400 naming it.
    init(_ options: JSONValue, hashLimits: PasswordHasher.Limits) throws(GatewayError) {
        let reader = try JSONInput(options, path: "plugins.password")
        try reader.rejectUnknown(allowed: ["argon2", "min_length", "human_check"])
        let minimumLength =
            try reader.integer("min_length", in: Self.minimumLengthFloor...Self.minimumLengthCeiling)
            ?? Self.minimumLengthFloor
        var argon2 = Argon2Parameters.owasp
        if let cost = try reader.object("argon2") {
            try cost.rejectUnknown(allowed: ["memory_kib", "iterations"])
            argon2 = Argon2Parameters(
                memoryKiB: try cost.integer("memory_kib", in: Argon2Parameters.memoryKiBRange)
                    ?? Argon2Parameters.owasp.memoryKiB,
                iterations: try cost.integer("iterations", in: Argon2Parameters.iterationsRange)
                    ?? Argon2Parameters.owasp.iterations)
        }
        try hashLimits.check(argon2, "plugins.password.argon2")
        self.init(argon2: argon2, minimumLength: minimumLength, hashLimits: hashLimits)
        humanCheck = try reader.object("human_check").map { check throws(GatewayError) in
            try SendProtection.readHumanCheck(check, path: "plugins.password.human_check")
        }
    }
}
