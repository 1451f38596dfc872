/// The gateway's one way to read and write JSON. Text is read by
/// ``StrictJSONReader`` (no member named twice, no control characters, at
/// most ``StrictJSONReader/maximumDepth`` levels) and written by
/// ``JSONObjectWriter``'s rules (members in byte order of their names, `/`
/// unescaped); `Codable` types pass through a ``JSONValue`` on the way.
/// No other JSON encoder, decoder or serializer is called (HouseRuleTests).
public enum JSONCoding {
    /// `value` as JSON text: compact, or indented by two spaces for a person to edit.
    public static func bytes(of value: some Encodable, indented: Bool = false) throws -> [UInt8] {
        bytes(of: try JSONValueEncoder.encode(value), indented: indented)
    }

    public static func bytes(of value: JSONValue, indented: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        JSONBytes.append(value, to: &bytes, indent: indented ? 0 : nil)
        return bytes
    }

    public static func text(of value: some Encodable, indented: Bool = false) throws -> String {
        String(decoding: try bytes(of: value, indented: indented), as: UTF8.self)
    }

    /// Any one JSON value, strictly; ``StrictJSONReader/Failure`` when it is not.
    public static func value(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        try StrictJSONReader.value(Array(bytes))
    }

    public static func value(_ text: String) throws -> JSONValue {
        try value(Array(text.utf8))
    }

    /// A `Decodable` read from JSON text.
    public static func decode<Value: Decodable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws -> Value {
        try JSONValueDecoder.decode(type, from: try value(bytes))
    }

    public static func decode<Value: Decodable>(_ type: Value.Type, from text: String) throws -> Value {
        try decode(type, from: Array(text.utf8))
    }

    /// A `Decodable` read from a value already parsed.
    public static func decode<Value: Decodable>(_ type: Value.Type, from json: JSONValue) throws -> Value {
        try JSONValueDecoder.decode(type, from: json)
    }

    /// A `Encodable` as a value, to inspect or merge before it is written.
    public static func value(of encodable: some Encodable) throws -> JSONValue {
        try JSONValueEncoder.encode(encodable)
    }
}
