import GatewayConsoleKit
import Hummingbird
import NIOCore

extension PageRenderer {
    /// A stylesheet or script from the console's embedded assets (never a template).
    static func asset(_ name: String) -> Response? {
        guard name.hasSuffix(".css") || name.hasSuffix(".js"),
            let text = embeddedConsoleAssets.first(where: { $0.name == name })?.text
        else { return nil }
        var fields = securityHeaders
        fields[.contentType] = name.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"
        fields[.cacheControl] = "public, max-age=300"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
