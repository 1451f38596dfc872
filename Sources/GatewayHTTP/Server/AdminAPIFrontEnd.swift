public import GatewayPluginKit
public import Hummingbird

/// Pages served beside the API that speak to it through ``AdminAPI`` (the
/// console): the router adds them with the API they may call.
public protocol AdminAPIFrontEnd: Sendable {
    func addRoutes(to router: Router<GatewayRequestContext>, api: AdminAPI)
}
