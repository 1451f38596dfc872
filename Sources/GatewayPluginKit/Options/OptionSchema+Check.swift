public import GatewayCore

extension OptionSchema {
    /// Refuses `options` (`null` is no options) unless they have this
    /// shape: no unknown member, every required one, each of its type and
    /// within its bounds. The 400's message names the member by its whole
    /// path (`plugins.phone_code.code_length`), as the plugins' own messages do.
    public func check(_ options: JSONValue, path: String) throws(GatewayError) {
        if case .object(let members) = options, let name = members.keys.sorted().first(where: { retired[$0] != nil }),
            let instead = retired[name]
        {
            throw .invalidRequest("\(path).\(name) \(instead)")
        }
        try shape.check(options == .null ? .object([:]) : options, path: path)
    }
}

extension OptionShape {
    /// Refuses `value` unless it has this shape; the 400's message names the member by its path under `path`.
    public func check(_ value: JSONValue, path: String) throws(GatewayError) {
        switch self {
        case .text(let rule):
            if rule.acceptsObject, case .object = value { return }
            guard case .string(let text) = value else { throw .invalidRequest("\(path) must be a string.") }
            try rule.check(text, path: path)
        case .integer(let range, _):
            guard case .number(let number) = value, let whole = Int(exactly: number), range.contains(whole) else {
                throw .invalidRequest("\(path) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
            }
        case .boolean:
            guard case .bool = value else { throw .invalidRequest("\(path) must be true or false.") }
        case .choice(let values, _, let nullable):
            if nullable && value == .null { return }
            guard case .string(let text) = value, values.contains(text) else {
                throw .invalidRequest("\(path) must be \(Self.words(values + (nullable ? ["null"] : []))).")
            }
        case .list(let elementShape, let count, let unique, _):
            guard case .array(let elements) = value, count.contains(elements.count) else {
                throw .invalidRequest("\(path) must be a list of \(Self.count(count)).")
            }
            if unique && Set(elements).count != elements.count { throw .invalidRequest("\(path) must not repeat a value.") }
            for (index, element) in elements.enumerated() { try elementShape.check(element, path: "\(path)[\(index)]") }
        case .object(let fields):
            try Self.check(value, fields: fields, path: path)
        case .oneMemberOf(let fields):
            guard case .object(let members) = value, members.count == 1 else {
                throw .invalidRequest("\(path) takes one of \(Self.words(fields.map(\.name))).")
            }
            try Self.check(value, fields: fields, path: path)
        case .offOr(let shape):
            if value == .bool(false) { return }
            guard case .object = value else { throw .invalidRequest("\(path) must be an object, or false to turn it off.") }
            try shape.check(value, path: path)
        case .map(let valueShape, let count, _):
            guard case .object(let members) = value, count.contains(members.count) else {
                throw .invalidRequest("\(path) must be an object of \(Self.count(count)).")
            }
            for (name, member) in members.sorted(by: { $0.key < $1.key }) { try valueShape.check(member, path: "\(path).\(name)") }
        case .variants(let variants):
            guard case .object(let members) = value else { throw .invalidRequest("\(path) must be an object.") }
            let types = variants.map(\.type)
            guard case .string(let type)? = members["type"], let variant = variants.first(where: { $0.type == type }) else {
                throw .invalidRequest("\(path).type must be \(Self.words(types)).")
            }
            try Self.check(value, fields: [OptionField("type", .choice([type]), required: true)] + variant.fields, path: path)
        case .component(let schema):
            try schema.shape.check(value, path: path)
        }
    }

    private static func check(_ value: JSONValue, fields: [OptionField], path: String) throws(GatewayError) {
        guard case .object(let members) = value else { throw .invalidRequest("\(path) must be an object.") }
        let known = Set(fields.map(\.name))
        if let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
            throw .invalidRequest("\(path).\(unknown) is not a known option.")
        }
        for field in fields {
            guard let member = members[field.name], member != .null || field.acceptsNull else {
                if field.required {
                    // A secret left out reads as one the API never shows: it must be sent again.
                    if case .text(let rule) = field.shape, rule.secret { try rule.check("", path: "\(path).\(field.name)") }
                    throw .invalidRequest("\(path).\(field.name) is required.")
                }
                continue
            }
            try field.shape.check(member, path: "\(path).\(field.name)")
        }
    }

    /// `a`, `a or b`, `a, b or c`.
    static func words(_ values: [String]) -> String {
        guard let last = values.last else { return "" }
        return values.count == 1 ? last : values.dropLast().joined(separator: ", ") + " or " + last
    }

    private static func count(_ range: ClosedRange<Int>) -> String {
        if range.upperBound == .max { return "at least \(range.lowerBound) entries" }
        return range.lowerBound == 0 ? "at most \(range.upperBound) entries" : "\(range.lowerBound) to \(range.upperBound) entries"
    }
}

extension OptionField {
    /// A nullable choice takes `null` as a value of its own (turning the option off).
    var acceptsNull: Bool {
        if case .choice(_, _, true) = shape { return true }
        return false
    }
}

extension TextRule {
    func check(_ text: String, path: String) throws(GatewayError) {
        let length = text.unicodeScalars.count
        if secret {
            let bounds = (minimumLength ?? 1)...(maximumLength ?? 4096)
            guard text != RedactedSecret.marker, bounds.contains(length) else {
                throw .invalidRequest(
                    "\(path) must be the secret itself (\(bounds.lowerBound) to \(bounds.upperBound) bytes); the admin API never shows it, so send it again when changing these settings.")
            }
            return
        }
        if let minimumLength, length < minimumLength {
            throw .invalidRequest(
                minimumLength == 1 ? "\(path) must not be empty." : "\(path) must be at least \(minimumLength) characters.")
        }
        if let maximumLength, length > maximumLength { throw .invalidRequest("\(path) must be at most \(maximumLength) characters.") }
        if let pattern, (try? Regex(pattern.expression)).flatMap({ text.wholeMatch(of: $0) }) == nil {
            throw .invalidRequest("\(path) must be \(pattern.meaning).")
        }
    }
}
