/// Text as HTML shows it: `&`, `<`, `>`, `"` and `'` as character
/// references, so no text can open a tag or leave an attribute (the
/// console's inline charts, an email code's HTML part).
public enum HTMLText {
    public static func escaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
