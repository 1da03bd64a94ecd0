import LifelineProtocol

// The built-in events of docs/PROTOCOL.md §5 as types, with §5's field names and optionality
// (LifecycleTypesTests checks them against EventCatalog): the application's in Lifecycle+Application,
// the broker's own in Lifecycle+Runtime. JSON objects and fields of any type are
// `JSONValue`s; `durationMs` is a `Double`, the other numbers `Int`.

/// The built-in lifecycle events (application events, then the runtime's own) as ``LifelineEvent``
/// types: `Service("push").on(Lifecycle.DidRegisterForRemoteNotifications.self) { event, _ in … }`.
public enum Lifecycle {
    /// Every built-in event type, in the catalogue's order.
    package static let all: [any LifelineEvent.Type] = [
        DidFinishLaunching.self, BeforeDidFinishLaunching.self, AfterDidFinishLaunching.self,
        WillResignActive.self, DidEnterBackground.self, WillEnterForeground.self, DidBecomeActive.self,
        WillTerminate.self, DidReceiveMemoryWarning.self, OpenURL.self, DidReceiveRemoteNotification.self,
        DidRegisterForRemoteNotifications.self, DidFailToRegisterForRemoteNotifications.self,
        DidReceiveLocalNotification.self, HandleActionForLocalNotification.self, ContinueUserActivity.self,
        PerformActionForShortcutItem.self, PerformFetch.self, HandleWatchKitExtensionRequest.self,
        ServiceDidStart.self, ServiceDidStop.self, ServiceInstanceDidJoin.self, ServiceInstanceDidLeave.self,
        DispatchDidComplete.self, DispatchDidStep.self,
        CallDidFinish.self, AppDidStart.self, AppDidExit.self, AppDidCrash.self, BootDidStart.self,
        BootTaskDidFinish.self, BootDidFinish.self,
    ]
}
