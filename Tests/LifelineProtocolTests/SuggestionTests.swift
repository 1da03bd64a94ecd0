import LifelineProtocol
import Testing

@Suite("Did you mean …?")
struct SuggestionTests {
    @Test("the closest name within a third of the length (at most 3 edits), or none")
    func suggestions() {
        let events = ["didBecomeActive", "didEnterBackground", "willTerminate"]
        #expect(Suggestion.closest(to: "didBecomeActiv", in: events) == "didBecomeActive")
        #expect(Suggestion.closest(to: "DIDENTERBACKGROUND", in: events) == "didEnterBackground")
        #expect(Suggestion.closest(to: "somethingElse", in: events) == nil)
        #expect(Suggestion.phrase(for: "gatway", in: ["gateway", "push"]) == "; did you mean 'gateway'?")
        #expect(Suggestion.phrase(for: "xy", in: ["gateway"]) == "")
    }
}
