/// Writes one JSON object member by member, in the order given. Used for
/// token headers and claims, whose bytes are signed: the output is exact and
/// cheap, with no encoder or dictionary ordering in between. Log lines use it too.
public struct JSONObjectWriter {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]

    public init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func add(_ key: String, _ value: String) {
        addKey(key)
        appendString(value)
    }

    public mutating func add(_ key: String, _ value: Int64) {
        addKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func add(_ key: String, _ value: Bool) {
        addKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func add(_ key: String, _ values: [String]) {
        addKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Adds `json`, JSON a writer finished (a nested object), as it is.
    public mutating func add(_ key: String, json: [UInt8]) {
        addKey(key)
        bytes.append(contentsOf: json)
    }

    /// Closes the object and returns its bytes.
    public consuming func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func addKey(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        appendString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
