/// Bodies that are not one JSON object, for every reader of JSON bodies:
/// broken syntax, bad numbers and escapes, invalid UTF-8, a byte-order mark.
public enum MalformedJSON {
    public static let samples: [[UInt8]] =
        [
            "", " ", "{", "}", "[]", "\"x\"", "null", "{}x", "{} {}", #"{"a":}"#, #"{"a" 1}"#, "{,}", #"{"a":1,}"#, #"{"a":1 "b":2}"#,
            #"{a:1}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":-}"#, #"{"a":.5}"#, #"{"a":1e}"#, #"{"a":+1}"#, #"{"a":tru}"#,
            #"{"a":nul}"#, #"{"a":True}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\ud800"}"#, #"{"a":"\ud800\u0041"}"#,
            #"{"a":"\udc00"}"#, "{\"a\":\"tab\there\"}", #"{"a":"open}"#, #"{"a":[1,]}"#, #"{"a":[1 2]}"#, #"{"a":[}"#,
            #"{"app_id":"x"#, #"{"credentials":{"type":}}"#, #"{"user_id":42,}"#, "{'a':1}",
        ].map { Array($0.utf8) } + [
            [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D],  // {"\xFF":1}
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x22, 0x7D],  // {"a":"\xC3"}: a cut-off sequence
            [0xEF, 0xBB, 0xBF] + Array("{}".utf8),  // a byte-order mark
        ]
}
