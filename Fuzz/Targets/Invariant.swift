/// An invariant of a fuzz target that did not hold on one input: libFuzzer's
/// entry (Fuzz/Sources) stops the process with it, so the input is saved as a
/// crash; the replay tests (`FuzzReplayTests`) fail with it.
public struct InvariantFailure: Error, CustomStringConvertible {
    public let description: String
}

/// Throws ``InvariantFailure`` with `message` when `condition` is false.
///
/// Never call it inside a `do` whose `catch` inspects the parser's error:
/// the catch would swallow the failure. Read the parser's verdict first
/// (`Result(catching:)`), then check it.
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) throws(InvariantFailure) {
    if !condition() { throw InvariantFailure(description: message()) }
}

/// The text of `bytes` when they are valid UTF-8, as every parser below receives text.
func text(_ bytes: [UInt8]) -> String? {
    String(validating: bytes, as: UTF8.self)
}
