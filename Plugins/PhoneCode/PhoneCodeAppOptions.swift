import GatewayCore
import Synchronization

/// Each app's phone-code options as its verifier was last built from them
/// (secrets opened), for the send route: the plugin's own record, so the
/// route never reaches into the tenant's verifier for them.
///
/// Written whenever the gateway builds an app's verifiers (load, change,
/// reload), before that tenant is served. An app deleted since keeps its
/// entry until the process ends; the send route finds its tenant first,
/// which answers 404 for such an app, so the entry is never read.
final class PhoneCodeAppOptions: Sendable {
    private let options = Mutex<[AppID: PhoneCodeOptions]>([:])

    func record(_ appOptions: PhoneCodeOptions, for appID: AppID) {
        options.withLock { $0[appID] = appOptions }
    }

    func options(for appID: AppID) -> PhoneCodeOptions? {
        options.withLock { $0[appID] }
    }
}
