public import NIOCore
import NIOHTTPTypesHTTP1

/// What Hummingbird's `additionalChannelHandlers` can hold: they go after its
/// codec from HTTP/1 parts to HTTP types, where a request's version and
/// framing are gone. When added, this puts ``HTTP1VersionHandler`` and, if
/// given a rule, ``RequestBodyRateGuard`` in front of that codec, and
/// removes itself.
public final class HTTP1HandlersInstaller: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = NIOAny

    private let bodyRate: RequestBodyRateGuard.Rule?

    public init(bodyRate: RequestBodyRateGuard.Rule?) {
        self.bodyRate = bodyRate
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        do {
            let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
            if let bodyRate {
                try pipeline.addHandler(RequestBodyRateGuard(rule: bodyRate), position: .before(codec))
            }
            try pipeline.addHandler(HTTP1VersionHandler(), position: .before(codec))
        } catch {
            context.fireErrorCaught(error)
        }
        pipeline.removeHandler(context: context, promise: nil)
    }
}
