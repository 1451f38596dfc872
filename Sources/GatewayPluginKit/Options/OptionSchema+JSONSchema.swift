public import GatewayCore

extension OptionSchema {
    /// The options as JSON Schema, as `openapi.yaml` publishes them under
    /// `components.schemas.<name>`: a secret is `writeOnly`, an option only
    /// an operator may change carries `x-operator-only`, and a shared shape
    /// is a `$ref` to its own component (``components``).
    public var jsonSchema: JSONValue {
        var schema = OptionShape.objectSchema(fields)
        if nullTurnsOff { schema["type"] = .array([.string("object"), .string("null")]) }
        if let description { schema["description"] = .string(description) }
        return .object(schema)
    }

    /// The declared shared shapes these options use, by name, each as JSON Schema.
    public var components: [String: JSONValue] {
        var found: [String: JSONValue] = [:]
        shape.collectComponents(into: &found)
        return found
    }
}

extension OptionShape {
    /// The shape as JSON Schema, as `openapi.yaml` publishes it.
    public var jsonSchemaValue: JSONValue { .object(jsonSchema) }

    var jsonSchema: [String: JSONValue] {
        switch self {
        case .text(let rule):
            var schema: [String: JSONValue] = [
                "type": rule.acceptsObject ? .array([.string("object"), .string("string")]) : .string("string")
            ]
            schema["minLength"] = rule.minimumLength.map(JSONValue.integer)
            schema["maxLength"] = rule.maximumLength.map(JSONValue.integer)
            schema["pattern"] = rule.pattern.map { .string($0.expression) }
            schema["format"] = rule.format.map { .string($0.rawValue) }
            schema["default"] = rule.defaultValue.map(JSONValue.string)
            if rule.secret { schema["writeOnly"] = .bool(true) }
            return schema
        case .integer(let range, let defaultValue):
            var schema: [String: JSONValue] = [
                "type": .string("integer"), "minimum": .integer(range.lowerBound), "maximum": .integer(range.upperBound),
            ]
            schema["default"] = defaultValue.map(JSONValue.integer)
            return schema
        case .boolean(let defaultValue):
            var schema: [String: JSONValue] = ["type": .string("boolean")]
            schema["default"] = defaultValue.map(JSONValue.bool)
            return schema
        case .choice(let values, let defaultValue, let nullable):
            var schema: [String: JSONValue] = [
                "type": nullable ? .array([.string("string"), .string("null")]) : .string("string"),
                "enum": .array(values.map(JSONValue.string) + (nullable ? [.null] : [])),
            ]
            schema["default"] = defaultValue.map(JSONValue.string)
            return schema
        case .list(let element, let count, let unique, let defaultValue):
            var schema: [String: JSONValue] = ["type": .string("array"), "items": .object(element.jsonSchema)]
            if count.lowerBound > 0 { schema["minItems"] = .integer(count.lowerBound) }
            if count.upperBound < .max { schema["maxItems"] = .integer(count.upperBound) }
            if unique { schema["uniqueItems"] = .bool(true) }
            schema["default"] = defaultValue.map { .array($0.map(JSONValue.string)) }
            return schema
        case .object(let fields):
            return Self.objectSchema(fields)
        case .oneMemberOf(let fields):
            var schema = Self.objectSchema(fields)
            schema["minProperties"] = .integer(1)
            schema["maxProperties"] = .integer(1)
            return schema
        case .offOr(let shape):
            return ["oneOf": .array([.object(["const": .bool(false)]), .object(shape.jsonSchema)])]
        case .map(let valueShape, let count, _):
            var schema: [String: JSONValue] = ["type": .string("object"), "additionalProperties": .object(valueShape.jsonSchema)]
            if count.lowerBound > 0 { schema["minProperties"] = .integer(count.lowerBound) }
            if count.upperBound < .max { schema["maxProperties"] = .integer(count.upperBound) }
            return schema
        case .variants(let variants):
            return [
                "oneOf": .array(
                    variants.map { variant in
                        var schema = Self.objectSchema([OptionField("type", .choice([variant.type]), required: true)] + variant.fields)
                        if case .object(var properties)? = schema["properties"] {
                            properties["type"] = .object(["const": .string(variant.type)])
                            schema["properties"] = .object(properties)
                        }
                        schema["description"] = variant.description.map(JSONValue.string)
                        return .object(schema)
                    })
            ]
        case .component(let schema):
            return ["$ref": .string("#/components/schemas/\(schema.name)")]
        }
    }

    static func objectSchema(_ fields: [OptionField]) -> [String: JSONValue] {
        var properties: [String: JSONValue] = [:]
        for field in fields {
            var schema = field.shape.jsonSchema
            schema["description"] = field.description.map(JSONValue.string)
            if field.operatorOnly { schema["x-operator-only"] = .bool(true) }
            properties[field.name] = .object(schema)
        }
        var schema: [String: JSONValue] = [
            "type": .string("object"), "additionalProperties": .bool(false), "properties": .object(properties),
        ]
        let required = fields.filter(\.required).map { JSONValue.string($0.name) }
        if !required.isEmpty { schema["required"] = .array(required) }
        return schema
    }

    func collectComponents(into found: inout [String: JSONValue]) {
        switch self {
        case .text, .integer, .boolean, .choice: break
        case .list(let element, _, _, _), .map(let element, _, _), .offOr(let element): element.collectComponents(into: &found)
        case .oneMemberOf(let fields): for field in fields { field.shape.collectComponents(into: &found) }
        case .object(let fields): for field in fields { field.shape.collectComponents(into: &found) }
        case .variants(let variants):
            for variant in variants { for field in variant.fields { field.shape.collectComponents(into: &found) } }
        case .component(let schema):
            found[schema.name] = schema.jsonSchema
            schema.shape.collectComponents(into: &found)
        }
    }
}

extension JSONValue {
    static func integer(_ value: Int) -> JSONValue { .number(Double(value)) }
}
