import GatewayCore
import GatewayCourier

/// The key a self-service code is stored under in `account_codes`: the
/// flow and the user it is for (`v:` verification, `r:` recovery, `c:`
/// address change, then the user id), or, for an address that belongs to
/// nobody, the flow and the address (`x:v:`, `x:r:`), so a request for an
/// unknown address stores, spends and limits a code like any other.
struct AccountCodeKey: CodeAddress {
    let text: String

    private init(_ text: String) {
        self.text = text
    }

    static func verification(of userID: String) -> AccountCodeKey { AccountCodeKey("v:" + userID) }
    static func recovery(of userID: String) -> AccountCodeKey { AccountCodeKey("r:" + userID) }
    static func emailChange(of userID: String) -> AccountCodeKey { AccountCodeKey("c:" + userID) }
    static func verificationOfNobody(at address: EmailAddress) -> AccountCodeKey { AccountCodeKey("x:v:" + address.text) }
    static func recoveryOfNobody(at address: EmailAddress) -> AccountCodeKey { AccountCodeKey("x:r:" + address.text) }

    /// What an address change's code is bound to beside its key: the new
    /// address, so a code sent to one address confirms no other.
    static func emailChangeBinding(of userID: String, to address: EmailAddress) -> AccountCodeKey {
        AccountCodeKey("c:" + userID + "|" + address.text)
    }

    /// Every key a user's codes live under: what their deletion, disabling or new password spends.
    static func all(of userID: String) -> [AccountCodeKey] {
        [verification(of: userID), recovery(of: userID), emailChange(of: userID)]
    }
}

/// `account_codes` (the plugin's migration 0002): self-service codes, one per key.
enum AccountCodeTable: CodeTable {
    typealias Address = AccountCodeKey
    static let name = "account_codes"
    static let addressColumn = "subject"
}
