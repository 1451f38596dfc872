public import GatewayCore

extension OptionSchema {
    /// The members declared for the object at `path` (dotted, with list
    /// indices, as ``mapSecrets(_:_:)`` names places) within `options`, and
    /// whether it is one kind of several (told apart by `type`); `nil` where
    /// no object is declared there.
    public func declaredFields(at path: [String], in options: JSONValue) -> (fields: [OptionField], isVariant: Bool)? {
        var shape = self.shape
        var value = options
        var remaining = path[...]
        while true {
            switch shape {
            case .component(let schema):
                shape = schema.shape
                continue
            case .offOr(let inner):
                shape = inner
                continue
            case .object(let fields), .oneMemberOf(let fields):
                guard let name = remaining.popFirst() else { return (fields, false) }
                guard let field = fields.first(where: { $0.name == name }) else { return nil }
                shape = field.shape
                value = value[name] ?? .null
            case .variants(let variants):
                guard let variant = variants.first(where: { $0.type == value["type"]?.stringValue }) else { return nil }
                guard let name = remaining.popFirst() else { return (variant.fields, true) }
                guard let field = variant.fields.first(where: { $0.name == name }) else { return nil }
                shape = field.shape
                value = value[name] ?? .null
            case .list(let element, _, _, _):
                guard let segment = remaining.popFirst(), let index = Int(segment), case .array(let elements) = value,
                    elements.indices.contains(index)
                else { return nil }
                shape = element
                value = elements[index]
            case .map(let element, _, _):
                guard let name = remaining.popFirst(), let member = value[name] else { return nil }
                shape = element
                value = member
            case .text, .integer, .boolean, .choice:
                return nil
            }
        }
    }

    /// `options` with each declared secret string replaced by
    /// `transform(path, value)`, `path` naming it within the options, dotted,
    /// with list indices (`sender.secret`, `users.0.password`): how secrets
    /// are redacted for answers and sealed at rest.
    public func mapSecrets(
        _ options: JSONValue, _ transform: (_ path: String, _ value: String) throws -> String
    ) rethrows -> JSONValue {
        try shape.mapSecrets(options, path: nil, transform)
    }

    /// The path (under `path`) of the first option only an operator may
    /// change (``OptionField/operatorOnly``) whose value differs between
    /// `options` and `stored`; `nil` when none does.
    public func operatorOnlyChange(_ options: JSONValue, from stored: JSONValue, path: String) -> String? {
        shape.operatorOnlyChange(options, from: stored, path: path)
    }
}

extension OptionShape {
    func mapSecrets(
        _ value: JSONValue, path: String?, _ transform: (_ path: String, _ value: String) throws -> String
    ) rethrows -> JSONValue {
        switch self {
        case .object(let fields), .oneMemberOf(let fields):
            return try Self.mapSecrets(value, fields: fields, path: path, transform)
        case .offOr(let inner):
            return try inner.mapSecrets(value, path: path, transform)
        case .variants(let variants):
            guard let variant = variants.first(where: { $0.type == value["type"]?.stringValue }) else { return value }
            return try Self.mapSecrets(value, fields: variant.fields, path: path, transform)
        case .component(let schema):
            return try schema.shape.mapSecrets(value, path: path, transform)
        case .list(let element, _, _, _):
            guard case .array(let elements) = value else { return value }
            var mapped: [JSONValue] = []
            for (index, item) in elements.enumerated() {
                mapped.append(try element.mapSecrets(item, path: Self.path(path, "\(index)"), transform))
            }
            return .array(mapped)
        case .map(let element, _, _):
            guard case .object(let members) = value else { return value }
            var mapped: [String: JSONValue] = [:]
            for (name, member) in members { mapped[name] = try element.mapSecrets(member, path: Self.path(path, name), transform) }
            return .object(mapped)
        case .text, .integer, .boolean, .choice:
            return value
        }
    }

    private static func mapSecrets(
        _ value: JSONValue, fields: [OptionField], path: String?, _ transform: (_ path: String, _ value: String) throws -> String
    ) rethrows -> JSONValue {
        guard case .object(var members) = value else { return value }
        for field in fields {
            guard let member = members[field.name] else { continue }
            if field.isSecret, case .string(let secret) = member {
                members[field.name] = .string(try transform(Self.path(path, field.name), secret))
            } else {
                members[field.name] = try field.shape.mapSecrets(member, path: Self.path(path, field.name), transform)
            }
        }
        return .object(members)
    }

    private static func path(_ path: String?, _ name: String) -> String { path.map { "\($0).\(name)" } ?? name }

    func operatorOnlyChange(_ value: JSONValue?, from stored: JSONValue?, path: String) -> String? {
        switch self {
        case .object(let fields), .oneMemberOf(let fields):
            return Self.operatorOnlyChange(value, from: stored, fields: fields, path: path)
        case .offOr(let inner):
            return inner.operatorOnlyChange(value == .bool(false) ? nil : value, from: stored == .bool(false) ? nil : stored, path: path)
        case .variants(let variants):
            let fields = Set(variants.flatMap(\.fields).map(\.name))
                .compactMap { name in variants.lazy.flatMap(\.fields).first { $0.name == name } }
            return Self.operatorOnlyChange(value, from: stored, fields: fields, path: path)
        case .component(let schema):
            return schema.shape.operatorOnlyChange(value, from: stored, path: path)
        case .list, .map, .text, .integer, .boolean, .choice:
            return nil
        }
    }

    private static func operatorOnlyChange(
        _ value: JSONValue?, from stored: JSONValue?, fields: [OptionField], path: String
    ) -> String? {
        for field in fields.sorted(by: { $0.name < $1.name }) {
            let here = "\(path).\(field.name)"
            let new = value?[field.name] ?? .null
            let old = stored?[field.name] ?? .null
            if field.operatorOnly, new != old { return here }
            if let found = field.shape.operatorOnlyChange(new, from: old, path: here) { return found }
        }
        return nil
    }
}
