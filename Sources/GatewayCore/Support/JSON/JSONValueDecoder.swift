import Foundation

/// Reads a `Decodable` out of a ``JSONValue`` that ``StrictJSONReader`` read:
/// the gateway's one JSON reader for `Codable` types too. A `URL` is read
/// from its text, `Data` from base64; an integer must be one, exactly.
struct JSONValueDecoder {
    static func decode<Value: Decodable>(_ type: Value.Type, from json: JSONValue) throws -> Value {
        try Reading(value: json, codingPath: []).decodeValue(type)
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String { String(intValue!) }
    var intValue: Int?
    init(stringValue: String) { self.intValue = Int(stringValue) }
    init(intValue: Int) { self.intValue = intValue }
}

private struct Reading: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch(_ expected: Any.Type) -> DecodingError {
        .typeMismatch(expected, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(value)"))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self) }
        return KeyedDecodingContainer(Keyed<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([JSONValue].self) }
        return Unkeyed(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(reading: self) }

    func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
        switch type {
        case is JSONValue.Type: return value as! Value
        case is URL.Type:
            guard case .string(let text) = value, let url = URL(string: text) else { throw mismatch(URL.self) }
            return url as! Value
        case is Data.Type:
            guard case .string(let text) = value, let data = Data(base64Encoded: text) else { throw mismatch(Data.self) }
            return data as! Value
        default:
            return try Value(from: self)
        }
    }

    func bool() throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self) }
        return flag
    }

    func string() throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self) }
        return text
    }

    func double() throws -> Double {
        guard case .number(let number) = value else { throw mismatch(Double.self) }
        return number
    }

    func integer<Integer: BinaryInteger>(_ type: Integer.Type) throws -> Integer {
        guard case .number(let number) = value, number.rounded() == number, let integer = Integer(exactly: number) else {
            throw mismatch(type)
        }
        return integer
    }

    func child(_ value: JSONValue, _ key: any CodingKey) -> Reading { Reading(value: value, codingPath: codingPath + [key]) }
}

private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func reading(_ key: Key) throws -> Reading {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \(key.stringValue)"))
        }
        return Reading(value: value, codingPath: codingPath).child(value, key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try reading(key).value == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reading(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reading(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reading(key).double() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try reading(key).double()) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reading(key).integer(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reading(key).integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reading(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reading(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reading(key).integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reading(key).integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reading(key).integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reading(key).integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reading(key).integer(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reading(key).integer(type) }
    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value { try reading(key).decodeValue(type) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try reading(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try reading(key).unkeyedContainer() }
    func superDecoder() throws -> any Decoder { try reading(Key(stringValue: "super")!) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try reading(key) }
}

private struct Unkeyed: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> Reading {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                JSONValue.self, .init(codingPath: codingPath, debugDescription: "past the array's end"))
        }
        defer { currentIndex += 1 }
        return Reading(value: elements[currentIndex], codingPath: codingPath + [IndexKey(intValue: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().bool() }
    mutating func decode(_ type: String.Type) throws -> String { try next().string() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().double() }
    mutating func decode(_ type: Float.Type) throws -> Float { Float(try next().double()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().integer(type) }
    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try next().decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct Single: SingleValueDecodingContainer {
    let reading: Reading
    var codingPath: [any CodingKey] { reading.codingPath }

    func decodeNil() -> Bool { reading.value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try reading.bool() }
    func decode(_ type: String.Type) throws -> String { try reading.string() }
    func decode(_ type: Double.Type) throws -> Double { try reading.double() }
    func decode(_ type: Float.Type) throws -> Float { Float(try reading.double()) }
    func decode(_ type: Int.Type) throws -> Int { try reading.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try reading.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try reading.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try reading.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try reading.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try reading.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try reading.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try reading.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try reading.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try reading.integer(type) }
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try reading.decodeValue(type) }
}
