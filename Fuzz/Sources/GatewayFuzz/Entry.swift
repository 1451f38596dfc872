import Foundation
import GatewayFuzzTargets

/// libFuzzer's entry points. The target is chosen by `FUZZ_TARGET` (one of
/// ``FuzzTarget``'s names), so one instrumented binary serves every parser.
nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>>>) -> CInt {
    let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("Set FUZZ_TARGET to one of: \(names).\n".utf8))
        exit(2)
    }
    selected = target
    return 0
}

/// Runs one input; a broken invariant stops the process, so libFuzzer saves the input as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    do {
        try selected!.run(bytes)
    } catch {
        fatalError("invariant failed: \(error)")
    }
    return 0
}

/// libFuzzer's driver, which its own `main` would call.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The process entry. SwiftPM links an executable with `main` defined as
/// `<product>_main`, so libFuzzer's own `main` is never pulled in; this one
/// starts its driver.
@_cdecl("gateway_fuzz_main")
public func gatewayFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzerTestOneInput(data, size) }
}
