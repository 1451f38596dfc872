/// What an admin token may touch: every app (`operator`), or one app's
/// settings, keys, users and audit (`app:<uuid>`).
public enum AdminScope: Sendable, Hashable, CustomStringConvertible {
    case `operator`
    case app(AppID)

    /// Reads `operator` or `app:<app id in any accepted form>`.
    public init?(_ text: String) {
        if text == "operator" {
            self = .operator
        } else if text.hasPrefix("app:"), let appID = AppID(String(text.dropFirst(4))) {
            self = .app(appID)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .operator: "operator"
        case .app(let appID): "app:\(appID)"
        }
    }

    /// Whether this scope reaches `appID`.
    public func covers(_ appID: AppID) -> Bool {
        switch self {
        case .operator: true
        case .app(let own): own == appID
        }
    }

    public var isOperator: Bool { self == .operator }
}
