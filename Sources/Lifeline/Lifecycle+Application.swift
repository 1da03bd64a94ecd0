import LifelineProtocol

/// The application's lifecycle events (UIApplicationDelegate and mPaaS callbacks), published by clients.
extension Lifecycle {
    /// application:didFinishLaunchingWithOptions:
    public struct DidFinishLaunching: LifelineEvent, Equatable {
        public static let name = EventName.didFinishLaunching
        /// Launch options (URL, notification, shortcut item).
        public var launchOptions: JSONValue?

        public init(launchOptions: JSONValue? = nil) {
            self.launchOptions = launchOptions
        }
    }

    /// beforeDidFinishLaunchingWithOptions: (first phase of a dispatched didFinishLaunching)
    public struct BeforeDidFinishLaunching: LifelineEvent, Equatable {
        public static let name = EventName.beforeDidFinishLaunching
        /// Launch options.
        public var launchOptions: JSONValue?

        public init(launchOptions: JSONValue? = nil) {
            self.launchOptions = launchOptions
        }
    }

    /// afterDidFinishLaunchingWithOptions: (last phase of a dispatched didFinishLaunching)
    public struct AfterDidFinishLaunching: LifelineEvent, Equatable {
        public static let name = EventName.afterDidFinishLaunching
        /// Launch options.
        public var launchOptions: JSONValue?

        public init(launchOptions: JSONValue? = nil) {
            self.launchOptions = launchOptions
        }
    }

    /// applicationWillResignActive:
    public struct WillResignActive: LifelineEvent, Equatable {
        public static let name = EventName.willResignActive

        public init() {
        }
    }

    /// applicationDidEnterBackground:
    public struct DidEnterBackground: LifelineEvent, Equatable {
        public static let name = EventName.didEnterBackground

        public init() {
        }
    }

    /// applicationWillEnterForeground:
    public struct WillEnterForeground: LifelineEvent, Equatable {
        public static let name = EventName.willEnterForeground

        public init() {
        }
    }

    /// applicationDidBecomeActive:
    public struct DidBecomeActive: LifelineEvent, Equatable {
        public static let name = EventName.didBecomeActive

        public init() {
        }
    }

    /// applicationWillTerminate:
    public struct WillTerminate: LifelineEvent, Equatable {
        public static let name = EventName.willTerminate

        public init() {
        }
    }

    /// applicationDidReceiveMemoryWarning:
    public struct DidReceiveMemoryWarning: LifelineEvent, Equatable {
        public static let name = EventName.didReceiveMemoryWarning

        public init() {
        }
    }

    /// application:openURL:sourceApplication:annotation:
    public struct OpenURL: LifelineEvent, Equatable {
        public static let name = EventName.openURL
        /// The URL to open.
        public var url: String
        /// Bundle id of the app that asked.
        public var sourceApplication: String?
        /// Property list from the source app.
        public var annotation: JSONValue?

        public init(url: String, sourceApplication: String? = nil, annotation: JSONValue? = nil) {
            self.url = url
            self.sourceApplication = sourceApplication
            self.annotation = annotation
        }
    }

    /// application:didReceiveRemoteNotification:fetchCompletionHandler:
    public struct DidReceiveRemoteNotification: LifelineEvent, Equatable {
        public static let name = EventName.didReceiveRemoteNotification
        /// The notification payload.
        public var userInfo: JSONValue

        public init(userInfo: JSONValue) {
            self.userInfo = userInfo
        }
    }

    /// application:didRegisterForRemoteNotificationsWithDeviceToken:
    public struct DidRegisterForRemoteNotifications: LifelineEvent, Equatable {
        public static let name = EventName.didRegisterForRemoteNotifications
        /// The APNs device token, hex.
        public var deviceToken: String

        public init(deviceToken: String) {
            self.deviceToken = deviceToken
        }
    }

    /// application:didFailToRegisterForRemoteNotificationsWithError:
    public struct DidFailToRegisterForRemoteNotifications: LifelineEvent, Equatable {
        public static let name = EventName.didFailToRegisterForRemoteNotifications
        /// Why registration failed.
        public var error: String

        public init(error: String) {
            self.error = error
        }
    }

    /// application:didReceiveLocalNotification:
    public struct DidReceiveLocalNotification: LifelineEvent, Equatable {
        public static let name = EventName.didReceiveLocalNotification
        /// The local notification.
        public var notification: JSONValue

        public init(notification: JSONValue) {
            self.notification = notification
        }
    }

    /// application:handleActionWithIdentifier:forLocalNotification:completionHandler:
    public struct HandleActionForLocalNotification: LifelineEvent, Equatable {
        public static let name = EventName.handleActionForLocalNotification
        /// The action identifier.
        public var identifier: String
        /// The local notification.
        public var notification: JSONValue?

        public init(identifier: String, notification: JSONValue? = nil) {
            self.identifier = identifier
            self.notification = notification
        }
    }

    /// application:continueUserActivity:restorationHandler:
    public struct ContinueUserActivity: LifelineEvent, Equatable {
        public static let name = EventName.continueUserActivity
        /// The NSUserActivity type.
        public var activityType: String
        /// The activity's user info.
        public var userInfo: JSONValue?

        public init(activityType: String, userInfo: JSONValue? = nil) {
            self.activityType = activityType
            self.userInfo = userInfo
        }
    }

    /// application:performActionForShortcutItem:completionHandler:
    public struct PerformActionForShortcutItem: LifelineEvent, Equatable {
        public static let name = EventName.performActionForShortcutItem
        /// The shortcut item type.
        public var type: String
        /// The URL the item opens.
        public var url: String?
        /// The item's user info.
        public var userInfo: JSONValue?

        public init(type: String, url: String? = nil, userInfo: JSONValue? = nil) {
            self.type = type
            self.url = url
            self.userInfo = userInfo
        }
    }

    /// application:performFetchWithCompletionHandler:
    public struct PerformFetch: LifelineEvent, Equatable {
        public static let name = EventName.performFetch

        public init() {
        }
    }

    /// application:handleWatchKitExtensionRequest:reply:
    public struct HandleWatchKitExtensionRequest: LifelineEvent, Equatable {
        public static let name = EventName.handleWatchKitExtensionRequest
        /// The request from the watch.
        public var userInfo: JSONValue?

        public init(userInfo: JSONValue? = nil) {
            self.userInfo = userInfo
        }
    }
}
