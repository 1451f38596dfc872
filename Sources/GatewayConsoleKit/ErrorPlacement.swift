import Foundation

/// Places one API message beside the field whose path it names: the
/// longest path among the fields that the message mentions.
struct ErrorPlacement {
    let message: String?
    private var best: (api: String, id: String)?
    private(set) var unplaced: String?

    init(message: String?) {
        self.message = message
        self.unplaced = message
    }

    mutating func consider(_ api: String, id: String) {
        guard let message, best.map({ api.count > $0.api.count }) ?? true else { return }
        // The path itself, not a longer name it begins (`sender` in `sender_id`).
        var rest = message[...]
        while let range = rest.range(of: api) {
            let next = rest[range.upperBound...].first
            if next.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? true {
                best = (api, id)
                return
            }
            rest = rest[range.upperBound...]
        }
    }

    mutating func finish() {
        if best != nil { unplaced = nil }
    }

    /// `fields` with the message on the chosen field (searched through
    /// groups, kinds and entries), and each field's description ids.
    func apply(to fields: [[String: Any]]) -> [[String: Any]] {
        func mark(_ fields: [[String: Any]]) -> [[String: Any]] {
            fields.map { field in
                var field = field
                if let best, let message, field["id"] as? String == best.id || field["type_id"] as? String == best.id {
                    field["error"] = message
                    field["has_error"] = true
                }
                let id = field["id"] as? String ?? ""
                let described = [
                    field["has_help"] as? Bool == true ? "\(id)-help" : nil, field["has_error"] as? Bool == true ? "\(id)-error" : nil,
                ].compactMap { $0 }
                field["described_by"] = described.joined(separator: " ")
                field["has_description"] = !described.isEmpty
                field["leaf"] = OptionForm.leafKinds.contains { field[$0] as? Bool == true }
                if let children = field["fields"] as? [[String: Any]] { field["fields"] = mark(children) }
                if let kinds = field["kinds"] as? [[String: Any]] {
                    field["kinds"] = kinds.map { kind in
                        var kind = kind
                        kind["fields"] = mark(kind["fields"] as? [[String: Any]] ?? [])
                        return kind
                    }
                }
                if let entries = field["entries"] as? [[String: Any]] {
                    field["entries"] = entries.map { entry in
                        var entry = entry
                        entry["fields"] = mark(entry["fields"] as? [[String: Any]] ?? [])
                        return entry
                    }
                }
                return field
            }
        }
        return mark(fields)
    }
}
