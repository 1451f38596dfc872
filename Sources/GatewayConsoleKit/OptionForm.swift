import Foundation
public import GatewayCore
public import GatewayPluginKit

/// A plugin's options (``OptionSchema``) as an HTML form and back: every
/// page of options is rendered from the declaration, none written by hand.
///
/// Each field's form name is its place in the options, dotted, under `o`
/// (`o.sender.twilio.account_sid`: a kind of several carries its `type`; a
/// list entry its index). Secrets are write-only: never shown, and left
/// empty they are sent back as ``RedactedSecret/marker``, which the API
/// reads as "keep the stored one". An option only an operator may change is
/// read-only for an app's admin, and its stored value is what is sent.
public struct OptionForm: Sendable {
    public let schema: OptionSchema
    /// Where the API's messages place the options (`plugins.phone_code`).
    public let apiPath: String
    public let isOperator: Bool

    public init(schema: OptionSchema, apiPath: String, isOperator: Bool) {
        self.schema = schema
        self.apiPath = apiPath
        self.isOperator = isOperator
    }

    static let root = "o"
    /// The template's flags, one per kind of field.
    static let kinds = ["text", "secret", "number", "checkbox", "select", "choices", "rows", "lines", "group", "variants"]
    /// The kinds that are one control, with their help and error beneath.
    static let leafKinds = ["text", "secret", "number", "checkbox", "select", "lines"]

    // MARK: Rendering

    /// The template values of every field, filled from `values` (the stored
    /// options as the API answers them, or what was typed), with `error`
    /// placed beside the field it names (or returned as `unplaced`).
    public func fields(values: JSONValue, error: String?) -> (fields: [[String: Any]], unplaced: String?) {
        var placement = ErrorPlacement(message: error)
        let fields = render(schema.fields, values: values, name: Self.root, api: apiPath, placement: &placement)
        placement.finish()
        return (placement.apply(to: fields), placement.unplaced)
    }

    private func render(
        _ fields: [OptionField], values: JSONValue, name: String, api: String, placement: inout ErrorPlacement
    ) -> [[String: Any]] {
        fields.map { field in
            render(field, value: values[field.name], name: "\(name).\(field.name)", api: api.isEmpty ? field.name : "\(api).\(field.name)", placement: &placement)
        }
    }

    private func render(
        _ field: OptionField, value: JSONValue?, name: String, api: String, placement: inout ErrorPlacement
    ) -> [String: Any] {
        // Every key set on every entry: a nested template would otherwise read a missing one from its parent.
        var entry: [String: Any] = Dictionary(uniqueKeysWithValues: Self.kinds.map { ($0, false) })
        entry.merge([
            "name": name, "id": Self.id(name), "label": Self.label(field.name), "api": api,
            "readonly": field.operatorOnly && !isOperator, "operator_only": field.operatorOnly, "required": field.required,
            "help": field.description ?? "", "has_help": field.description != nil, "error": "", "has_error": false,
            "value": "", "placeholder": "", "maxlength": "",
        ]) { _, new in new }
        placement.consider(api, id: Self.id(name))
        switch field.shape {
        case .text(let rule):
            if rule.secret {
                entry["secret"] = true
                entry["stored"] = value?.stringValue != nil
            } else {
                entry["text"] = true
                entry["value"] = value?.stringValue ?? value.map(Self.text) ?? ""
                entry["placeholder"] = rule.defaultValue ?? ""
                entry["maxlength"] = rule.maximumLength.map(String.init) ?? ""
            }
        case .integer(let range, let defaultValue):
            entry["number"] = true
            entry["value"] = value.map(Self.text) ?? ""
            entry["bounds"] = "\(range.lowerBound) to \(range.upperBound)"
            entry["placeholder"] = defaultValue.map(String.init) ?? ""
        case .boolean(let defaultValue):
            entry["checkbox"] = true
            entry["checked"] = value == .bool(true) || (value == nil && defaultValue == true)
        case .choice(let values, let defaultValue, _):
            entry["select"] = true
            let chosen = value?.stringValue
            entry["unset_label"] = defaultValue.map { "default (\($0))" } ?? "not set"
            entry["options"] = values.map { ["value": $0, "selected": $0 == chosen] }
        case .list(.choice(let values, _, _), _, _, let defaultValue):
            entry["choices"] = true
            let items: [JSONValue] = if case .array(let items)? = value { items } else { [] }
            let chosen = Set(items.compactMap(\.stringValue))
            entry["options"] = values.map {
                ["value": $0, "checked": chosen.contains($0), "id": Self.id("\(name).\($0)"), "field_name": "\(name).\($0)"]
            }
            entry["help"] = [field.description, defaultValue.map { "None ticked: \($0.joined(separator: ", "))." }]
                .compactMap { $0 }.joined(separator: " ")
            entry["has_help"] = true
        case .list(.variants(let variants), let count, _, _):
            // Rows, each one kind chosen by its `type`; a row's messages name it by that type (`token_profiles.stream.api_secret`).
            let items: [JSONValue] = if case .array(let items)? = value { items } else { [] }
            Self.rows(items, adding: .object([:]), upTo: count.upperBound, name: name, into: &entry) { index, item in
                let kind = OptionField("kind", .variants(variants), required: index < items.count)
                let type = item["type"]?.stringValue ?? "new"
                return [render(kind, value: item, name: "\(name).\(index)", api: "\(api).\(type)", placement: &placement)]
            }
        case .list(.object(let fields), let count, _, _):
            let items: [JSONValue] = if case .array(let items)? = value { items } else { [] }
            Self.rows(items, adding: .object([:]), upTo: count.upperBound, name: name, into: &entry) { index, item in
                render(fields, values: item, name: "\(name).\(index)", api: "\(api)[\(index)]", placement: &placement)
            }
        case .list:
            entry["lines"] = true
            let items: [JSONValue] = if case .array(let items)? = value { items } else { [] }
            entry["value"] = items.map(Self.text).joined(separator: "\n")
        case .map(let valueShape, let count, let key):
            // Rows as a list's, each with its name (a template's language) as its first field.
            let members: [(String, JSONValue)] = if case .object(let members)? = value { members.sorted { $0.key < $1.key } } else { [] }
            Self.rows(members, adding: ("", .object([:])), upTo: count.upperBound, name: name, into: &entry) { index, member in
                let (memberName, item) = member
                let keyField = OptionField(key, .text(TextRule()), required: true)
                let named = render(keyField, value: .string(memberName), name: Self.keySlot(name, index), api: "\(api).\(memberName)", placement: &placement)
                // An object's members beside the name; any other value as one field, `value`.
                let valueFields: [[String: Any]] =
                    if case .object(let fields) = valueShape {
                        render(fields, values: item, name: "\(name).\(index)", api: "\(api).\(memberName)", placement: &placement)
                    } else {
                        [render(OptionField("value", valueShape), value: memberName.isEmpty ? nil : item, name: "\(name).\(index).value", api: "\(api).\(memberName)", placement: &placement)]
                    }
                return [named] + valueFields
            }
        case .object(let fields):
            entry["group"] = true
            entry["fields"] = render(fields, values: value ?? .object([:]), name: name, api: api, placement: &placement)
        case .oneMemberOf(let fields):
            entry["group"] = true
            let one = "Fill in one of \(fields.map(\.name).joined(separator: " or ")), not both."
            entry["help"] = [field.description, one].compactMap { $0 }.joined(separator: " ")
            entry["has_help"] = true
            entry["fields"] = render(fields, values: value ?? .object([:]), name: name, api: api, placement: &placement)
        case .offOr(let inner):
            // Its own settings, and a box that turns it off (`false`) instead.
            entry["group"] = true
            let off = render(
                OptionField("turned_off", .boolean()), value: .bool(value == .bool(false)), name: Self.offSlot(name), api: api,
                placement: &placement)
            let settings = value == .bool(false) ? nil : value
            var inner = render(OptionField(field.name, inner), value: settings, name: name, api: api, placement: &placement)
            let innerFields = inner["fields"] as? [[String: Any]] ?? [inner]
            inner["fields"] = [off] + innerFields
            entry["fields"] = inner["fields"]
        case .component(let schema):
            entry["group"] = true
            entry["help"] = field.description ?? schema.description ?? ""
            entry["has_help"] = field.description != nil || schema.description != nil
            entry["fields"] = render(schema.fields, values: value ?? .object([:]), name: name, api: api, placement: &placement)
        case .variants(let variants):
            entry["variants"] = true
            let chosen = value?["type"]?.stringValue
            entry["type_id"] = Self.id("\(name).type")
            entry["type_name"] = "\(name).type"
            placement.consider("\(api).type", id: Self.id("\(name).type"))
            entry["options"] = variants.map { ["value": $0.type, "selected": $0.type == chosen] }
            entry["kinds"] = variants.map { variant -> [String: Any] in
                // Only the chosen kind's fields may carry the message: the others share its paths.
                var elsewhere = ErrorPlacement(message: nil)
                let isChosen = variant.type == chosen
                return [
                    "type": variant.type, "id": Self.id("\(name).\(variant.type)"), "chosen": isChosen,
                    "help": variant.description ?? "", "has_help": variant.description != nil,
                    "fields": isChosen
                        ? render(variant.fields, values: value ?? .object([:]), name: "\(name).\(variant.type)", api: api, placement: &placement)
                        : render(variant.fields, values: .object([:]), name: "\(name).\(variant.type)", api: api, placement: &elsewhere),
                ]
            }
        }
        return entry
    }

    /// The form name of the box that turns an ``OptionShape/offOr(_:)`` option off.
    static func offSlot(_ name: String) -> String { "\(name).~off" }

    /// The form name of a map row's own name (its member's name), apart from the member's fields.
    /// A list's or map's rows: the entries stored, then one empty entry to
    /// add while there is room; `fields` renders a row's fields.
    private static func rows<Item>(
        _ items: [Item], adding empty: Item, upTo maximum: Int, name: String, into entry: inout [String: Any],
        fields: (_ index: Int, _ item: Item) -> [[String: Any]]
    ) {
        let shown = items + (items.count < maximum ? [empty] : [])
        entry["rows"] = true
        entry["row_count"] = shown.count
        entry["entries"] = shown.enumerated().map { index, item -> [String: Any] in
            [
                "index": index, "number": index + 1, "is_new": index >= items.count,
                "remove_id": id("\(name).\(index).remove"), "remove_name": "\(name).\(index).remove",
                "fields": fields(index, item),
            ]
        }
    }

    static func keySlot(_ name: String, _ index: Int) -> String { "\(name).\(index).~name" }

    /// An HTML id for a form name: letters, digits, `-` and `_` only.
    static func id(_ name: String) -> String {
        "opt-" + String(name.dropFirst(root.count + 1).map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "-" })
    }

    /// `code_ttl_seconds` as `Code TTL seconds`, `base_url` as `Base URL`.
    static func label(_ name: String) -> String {
        let words = name.split(separator: "_").map { initialisms.contains(String($0)) ? $0.uppercased() : String($0) }
        let text = words.joined(separator: " ")
        return text.prefix(1).uppercased() + text.dropFirst()
    }

    /// Words an option's name spells in lower case that read as capitals.
    static let initialisms: Set<String> = [
        "api", "id", "ip", "rp", "sid", "sms", "smtp", "ses", "tls", "ttl", "uri", "url", "totp",
    ]

    static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        case .number(let number): number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .bool(let flag): String(flag)
        case .null: ""
        case .array, .object: String(decoding: JSONCoding.bytes(of: value), as: UTF8.self)
        }
    }

    // MARK: Reading

    /// The options the form holds. `stored` (as the API answers them,
    /// secrets as the marker) decides what an empty secret and a read-only
    /// field send.
    public func options(from form: FormInput, stored: JSONValue) -> JSONValue {
        read(schema.fields, form: form, name: Self.root, stored: stored) ?? .object([:])
    }

    private func read(_ fields: [OptionField], form: FormInput, name: String, stored: JSONValue?) -> JSONValue? {
        var members: [String: JSONValue] = [:]
        for field in fields {
            let stored = stored?[field.name]
            if field.operatorOnly && !isOperator {
                members[field.name] = stored
                continue
            }
            members[field.name] = read(field, form: form, name: "\(name).\(field.name)", stored: stored)
        }
        return members.isEmpty ? nil : .object(members)
    }

    private func read(_ field: OptionField, form: FormInput, name: String, stored: JSONValue?) -> JSONValue? {
        switch field.shape {
        case .text(let rule):
            let typed = form[name] ?? ""
            if rule.secret {
                guard typed.isEmpty else { return .string(typed) }
                return stored?.stringValue != nil ? .string(RedactedSecret.marker) : nil
            }
            return typed.isEmpty ? nil : .string(typed)
        case .integer:
            guard let typed = form.text(name) else { return nil }
            // Not a number: sent as typed, so the API's message names the field and its bounds.
            return Int(typed).map { .number(Double($0)) } ?? .string(typed)
        case .boolean(let defaultValue):
            let checked = form.isChecked(name)
            return checked == (defaultValue ?? false) && stored == nil ? nil : .bool(checked)
        case .choice(_, _, let nullable):
            guard let typed = form.text(name) else { return nullable && stored == .null ? .null : nil }
            return .string(typed)
        case .list(.choice(let values, _, _), _, _, _):
            let chosen = values.filter { form.isChecked("\(name).\($0)") }
            return chosen.isEmpty ? nil : .array(chosen.map(JSONValue.string))
        case .list(.variants(let variants), _, _, _):
            let rows = min(Int(form["\(name).rows"] ?? "") ?? 0, 1000)
            let storedItems: [JSONValue] = if case .array(let items)? = stored { items } else { [] }
            var items: [JSONValue] = []
            for index in 0..<rows where !form.isChecked("\(name).\(index).remove") {
                let before = index < storedItems.count ? storedItems[index] : nil
                let kind = OptionField("kind", .variants(variants))
                if let item = read(kind, form: form, name: "\(name).\(index)", stored: before) { items.append(item) }
            }
            return items.isEmpty ? nil : .array(items)
        case .list(.object(let fields), _, _, _):
            let rows = min(Int(form["\(name).rows"] ?? "") ?? 0, 1000)
            let storedItems: [JSONValue] = if case .array(let items)? = stored { items } else { [] }
            var items: [JSONValue] = []
            for index in 0..<rows where !form.isChecked("\(name).\(index).remove") {
                let before = index < storedItems.count ? storedItems[index] : nil
                if let item = read(fields, form: form, name: "\(name).\(index)", stored: before) { items.append(item) }
            }
            return items.isEmpty ? nil : .array(items)
        case .list:
            let lines = (form[name] ?? "").split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return lines.isEmpty ? nil : .array(lines.map(JSONValue.string))
        case .map(let valueShape, _, _):
            let rows = min(Int(form["\(name).rows"] ?? "") ?? 0, 1000)
            var members: [String: JSONValue] = [:]
            for index in 0..<rows where !form.isChecked("\(name).\(index).remove") {
                let memberName = form.text(Self.keySlot(name, index)) ?? ""
                let item =
                    if case .object(let fields) = valueShape {
                        read(fields, form: form, name: "\(name).\(index)", stored: stored?[memberName])
                    } else {
                        read(OptionField("value", valueShape), form: form, name: "\(name).\(index).value", stored: stored?[memberName])
                    }
                // A row left wholly empty adds nothing; one without its name is sent so that the API names what is missing.
                if memberName.isEmpty && item == nil { continue }
                members[memberName] = item ?? .object([:])
            }
            return members.isEmpty ? nil : .object(members)
        case .object(let fields), .oneMemberOf(let fields):
            return read(fields, form: form, name: name, stored: stored)
        case .offOr(let inner):
            if form.isChecked(Self.offSlot(name)) { return .bool(false) }
            return read(OptionField(field.name, inner), form: form, name: name, stored: stored == .bool(false) ? nil : stored)
        case .component(let schema):
            return read(schema.fields, form: form, name: name, stored: stored)
        case .variants(let variants):
            guard let type = form.text("\(name).type"), let variant = variants.first(where: { $0.type == type }) else {
                return nil
            }
            let kept = stored?["type"]?.stringValue == type ? stored : nil
            var members: [String: JSONValue] = ["type": .string(type)]
            if case .object(let rest)? = read(variant.fields, form: form, name: "\(name).\(type)", stored: kept) {
                members.merge(rest) { _, new in new }
            }
            return .object(members)
        }
    }
}
