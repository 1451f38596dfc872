import GatewayHTTP
import Testing

/// A replica stays in rotation while its database fails over within the
/// grace (the retry window its requests wait out), and leaves past it.
@Suite struct ReadinessTests {
    @Test func aDatabaseAwayForLessThanTheGraceLeavesTheReplicaReady() {
        let patient = Readiness(outageGrace: .seconds(3600))
        patient.markStarted()
        #expect(patient.problem?.contains("listener") == true, "not ready before the listener first connects")
        patient.setListening(true)
        #expect(patient.problem == nil)
        patient.setListening(false)
        #expect(patient.problem == nil, "a listener away within the grace")
        #expect(patient.noteDatabase(answered: false))
        #expect(patient.noteDatabase(answered: false))

        let strict = Readiness(outageGrace: .zero)
        strict.markStarted()
        strict.setListening(true)
        #expect(strict.problem == nil)
        strict.setListening(false)
        #expect(strict.problem?.contains("listener") == true)
        #expect(!strict.noteDatabase(answered: false))
        #expect(strict.noteDatabase(answered: true))
        strict.setListening(true)
        #expect(strict.problem == nil)
    }
}
