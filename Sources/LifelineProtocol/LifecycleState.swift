/// The application's lifecycle state, as the broker keeps it (UIApplication's states, plus launching
/// and terminating).
///
/// ```
/// notRunning ─didFinishLaunching→ launching ─didBecomeActive→ active ─willResignActive→ inactive
/// inactive ─didBecomeActive→ active        inactive ─didEnterBackground→ background
/// launching ─didEnterBackground→ background (a background launch)
/// background ─willEnterForeground→ inactive
/// launching | inactive | active | background ─willTerminate→ terminating ─didFinishLaunching→ launching
/// ```
/// Other events do not move the state and are accepted in any state.
package enum LifecycleState: String, Sendable, CaseIterable {
    case notRunning, launching, inactive, active, background, terminating

    /// The state `event` leads to from here, nil when the event does not move the state, or the
    /// reason it makes no sense here.
    public func applying(_ event: EventName) -> Result<LifecycleState?, LifecycleError> {
        // Only built-in names (no dots) move the state: a custom name is not looked up.
        guard !event.isCustom, let transition = LifecycleState.transitions[event] else {
            return .success(nil)
        }
        guard transition.from.contains(self) else {
            return .failure(LifecycleError(event: event, state: self, expected: transition.from))
        }
        return .success(transition.to)
    }

    /// The state `event` leads to whatever the current state (used when an event is forced).
    public static func target(of event: EventName) -> LifecycleState? {
        event.isCustom ? nil : transitions[event]?.to
    }

    static let transitions: [EventName: (from: Set<LifecycleState>, to: LifecycleState)] = [
        .didFinishLaunching: ([.notRunning, .terminating], .launching),
        .didBecomeActive: ([.launching, .inactive], .active),
        .willResignActive: ([.active], .inactive),
        .didEnterBackground: ([.inactive, .launching], .background),
        .willEnterForeground: ([.background], .inactive),
        .willTerminate: ([.launching, .inactive, .active, .background], .terminating),
    ]
}

/// An event that makes no sense in the current lifecycle state.
package struct LifecycleError: Error, Sendable, Equatable, CustomStringConvertible {
    public let event: EventName
    public let state: LifecycleState
    public let expected: Set<LifecycleState>

    public var description: String {
        let order = LifecycleState.allCases.filter { expected.contains($0) }.map(\.rawValue)
        let list =
            order.count > 1 ? order.dropLast().joined(separator: ", ") + " or " + order.last! : order.joined()
        return
            "\(event) makes no sense while the application is \(state.rawValue) (it is valid while \(list)); "
            + "send it with force to override ('force': true; lifeline publish --force, lifeline dispatch --force)"
    }
}
