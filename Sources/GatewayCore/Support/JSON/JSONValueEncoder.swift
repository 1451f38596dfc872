import Foundation

/// Turns an `Encodable` into a ``JSONValue``, for ``JSONObjectWriter``'s
/// rules to write: the gateway's one JSON writer for `Codable` answers too.
/// As `JSONEncoder` does by default, a `URL` is written as its text, `Data`
/// as base64 and a `Date` as its own `Codable` form; an integer past 2^53,
/// which a `Double` would round, is refused rather than changed.
struct JSONValueEncoder {
    static func encode(_ value: some Encodable) throws -> JSONValue {
        let root = Slot()
        try Node(slot: root, codingPath: []).encodeValue(value)
        return root.value ?? .object([:])
    }
}

/// Where one value is written; containers fill theirs in as members arrive.
private final class Slot {
    enum Content {
        case value(JSONValue)
        case object([(String, Slot)])
        case array([Slot])
    }

    var content: Content?

    var value: JSONValue? {
        switch content {
        case nil: return nil
        case .value(let value): return value
        case .object(let members):
            var object: [String: JSONValue] = [:]
            for (key, slot) in members { object[key] = slot.value ?? .object([:]) }
            return .object(object)
        case .array(let slots): return .array(slots.map { $0.value ?? .object([:]) })
        }
    }

    func member(_ key: String) -> Slot {
        let slot = Slot()
        guard case .object(var members) = content else { preconditionFailure("keyed container over a value") }
        members.removeAll { $0.0 == key }
        members.append((key, slot))
        content = .object(members)
        return slot
    }

    func element() -> Slot {
        let slot = Slot()
        guard case .array(var slots) = content else { preconditionFailure("unkeyed container over a value") }
        slots.append(slot)
        content = .array(slots)
        return slot
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

private struct Node: Encoder {
    let slot: Slot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = slot.content {} else { slot.content = .object([]) }
        return KeyedEncodingContainer(Keyed<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = slot.content {} else { slot.content = .array([]) }
        return Unkeyed(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: self) }

    func encodeValue(_ value: some Encodable) throws {
        switch value {
        case let url as URL: slot.content = .value(.string(url.absoluteString))
        case let data as Data: slot.content = .value(.string(data.base64EncodedString()))
        case let json as JSONValue: slot.content = .value(json)
        default: try value.encode(to: self)
        }
    }

    func encodeInteger(_ value: some BinaryInteger) throws {
        guard value.magnitude <= 9_007_199_254_740_992 else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(value) is past what a JSON number holds exactly (2^53)"))
        }
        slot.content = .value(.number(Double(value)))
    }

    func encodeFloat(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "JSON has no \(value)"))
        }
        slot.content = .value(.number(value))
    }

    func child(_ slot: Slot, _ key: any CodingKey) -> Node { Node(slot: slot, codingPath: codingPath + [key]) }
}

private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let codingPath: [any CodingKey]

    private func node(_ key: Key) -> Node { Node(slot: slot, codingPath: codingPath).child(slot.member(key.stringValue), key) }

    mutating func encodeNil(forKey key: Key) throws { node(key).slot.content = .value(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { node(key).slot.content = .value(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { node(key).slot.content = .value(.string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try node(key).encodeFloat(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try node(key).encodeFloat(Double(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try node(key).encodeInteger(value) }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws { try node(key).encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        node(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { node(key).unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { node(Key(stringValue: "super")!) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { node(key) }
}

private struct Unkeyed: UnkeyedEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var count: Int {
        guard case .array(let slots) = slot.content else { return 0 }
        return slots.count
    }

    private func next() -> Node {
        Node(slot: slot, codingPath: codingPath).child(slot.element(), AnyKey(intValue: count))
    }

    mutating func encodeNil() throws { next().slot.content = .value(.null) }
    mutating func encode(_ value: Bool) throws { next().slot.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { next().slot.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { try next().encodeFloat(value) }
    mutating func encode(_ value: Float) throws { try next().encodeFloat(Double(value)) }
    mutating func encode(_ value: Int) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: some Encodable) throws { try next().encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { next() }
}

private struct Single: SingleValueEncodingContainer {
    let node: Node
    var codingPath: [any CodingKey] { node.codingPath }

    mutating func encodeNil() throws { node.slot.content = .value(.null) }
    mutating func encode(_ value: Bool) throws { node.slot.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { node.slot.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { try node.encodeFloat(value) }
    mutating func encode(_ value: Float) throws { try node.encodeFloat(Double(value)) }
    mutating func encode(_ value: Int) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try node.encodeInteger(value) }
    mutating func encode(_ value: some Encodable) throws { try node.encodeValue(value) }
}
