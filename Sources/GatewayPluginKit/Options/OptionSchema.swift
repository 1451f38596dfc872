/// A plugin's options, declared once: each member's type, bounds, default,
/// whether it is a secret and whether only an operator may change it. The
/// one declaration is what the admin API checks an app's options against
/// before the plugin reads them (``check(_:path:)``), what `openapi.yaml`
/// publishes (``jsonSchema``, held equal by a test), and what the console
/// renders as a form. The plugin's own reading adds only what a type cannot
/// say (a phone number's form, an address policy).
public struct OptionSchema: Sendable {
    /// The schema's name under `components.schemas` in `openapi.yaml` (`PhoneCodeOptions`).
    public let name: String
    public let description: String?
    public let fields: [OptionField]
    /// Whether `null` turns the whole setting off (an app's `sessions`):
    /// published as `type: [object, 'null']`, and the console's form has an
    /// "on" switch.
    public let nullTurnsOff: Bool
    /// Options taken once and no longer, each with what to do instead
    /// ("is each provider's own setting now: ..."): refused with that
    /// sentence, not as an unknown option.
    public let retired: [String: String]

    public init(
        name: String, description: String? = nil, nullTurnsOff: Bool = false, retired: [String: String] = [:],
        fields: [OptionField]
    ) {
        self.name = name
        self.description = description
        self.nullTurnsOff = nullTurnsOff
        self.retired = retired
        self.fields = fields
    }

    /// The options as one object shape.
    public var shape: OptionShape { .object(fields) }
}

/// One member of an options object.
public struct OptionField: Sendable {
    public let name: String
    public let shape: OptionShape
    public let required: Bool
    /// Only an operator token may change it; an app's admin sees it read-only.
    public let operatorOnly: Bool
    /// Where a secret beside it goes (a sender's URL or host): a secret sent
    /// back as ``RedactedSecret/marker`` keeps the stored one only while
    /// every destination beside it is unchanged, so a kept secret is never
    /// sent somewhere new.
    public let destination: Bool
    public let description: String?

    public init(
        _ name: String, _ shape: OptionShape, required: Bool = false, operatorOnly: Bool = false, destination: Bool = false,
        description: String? = nil
    ) {
        self.name = name
        self.shape = shape
        self.required = required
        self.operatorOnly = operatorOnly
        self.destination = destination
        self.description = description
    }

    /// Whether the value is a write-only secret.
    public var isSecret: Bool {
        if case .text(let rule) = shape { return rule.secret }
        return false
    }
}

/// The type of an option's value.
public indirect enum OptionShape: Sendable {
    case text(TextRule)
    /// A whole number within the range.
    case integer(ClosedRange<Int>, default: Int? = nil)
    case boolean(default: Bool? = nil)
    /// One of the listed strings; `nullable` also takes `null` (which turns the option off).
    case choice([String], default: String? = nil, nullable: Bool = false)
    /// A list whose length is within `count`; `defaultValue` is published only.
    case list(of: OptionShape, count: ClosedRange<Int>, unique: Bool = false, defaultValue: [String]? = nil)
    /// An object with exactly these members.
    case object([OptionField])
    /// An object with exactly one of these members (a country list that
    /// allows or denies).
    case oneMemberOf([OptionField])
    /// `false` (turned off), or a value of the shape (a breaker's settings).
    case offOr(OptionShape)
    /// An object whose members are named freely (an email template by its
    /// language tag), each of one shape; `key` says what a name is (`language`,
    /// the console's label for it). The plugin checks the names.
    case map(of: OptionShape, count: ClosedRange<Int>, key: String)
    /// One of several objects, told apart by their `type` member (an SMS sender: `webhook`, `twilio`, `log`).
    case variants([OptionVariant])
    /// An object of its own name in `openapi.yaml`, shared between plugins (`CircuitBreaker`).
    case component(OptionSchema)
}

/// One kind of a ``OptionShape/variants(_:)`` value.
public struct OptionVariant: Sendable {
    /// The `type` member's value.
    public let type: String
    public let fields: [OptionField]
    public let description: String?

    public init(_ type: String, description: String? = nil, _ fields: [OptionField]) {
        self.type = type
        self.fields = fields
        self.description = description
    }
}

/// A string option's rules. Lengths count Unicode scalars, as JSON Schema does.
public struct TextRule: Sendable {
    public enum Format: String, Sendable {
        case uri
        case dateTime = "date-time"
    }

    public var minimumLength: Int?
    public var maximumLength: Int?
    /// A regular expression the whole value must match, and what it means in words.
    public var pattern: (expression: String, meaning: String)?
    public var format: Format?
    /// Write-only: answered as ``RedactedSecret/marker``, sealed at rest.
    public var secret: Bool
    public var defaultValue: String?
    /// Also takes the JSON object the text would spell (a key file pasted
    /// as text, or sent as the object it is).
    public var acceptsObject: Bool = false

    public init(
        length: ClosedRange<Int>? = nil, maximumLength: Int? = nil, pattern: (String, meaning: String)? = nil,
        format: Format? = nil, secret: Bool = false, default defaultValue: String? = nil
    ) {
        self.minimumLength = length?.lowerBound
        self.maximumLength = length?.upperBound ?? maximumLength
        self.pattern = pattern.map { (expression: $0.0, meaning: $0.meaning) }
        self.format = format
        self.secret = secret
        self.defaultValue = defaultValue
    }
}

extension OptionShape {
    /// Text of any length up to `maximumLength`.
    public static func text(maximumLength: Int? = nil, default value: String? = nil) -> OptionShape {
        .text(TextRule(maximumLength: maximumLength, default: value))
    }

    /// A write-only secret of `length` scalars.
    public static func secret(_ length: ClosedRange<Int>) -> OptionShape {
        .text(TextRule(length: length, secret: true))
    }

    /// A write-only secret that is a JSON document (a service account's key
    /// file): the object itself, or its text.
    public static func secretDocument(maximumLength: Int) -> OptionShape {
        var rule = TextRule(length: 1...maximumLength, secret: true)
        rule.acceptsObject = true
        return .text(rule)
    }

    /// An absolute URL (its scheme and host the plugin checks).
    public static let url = OptionShape.text(TextRule(format: .uri))
}
