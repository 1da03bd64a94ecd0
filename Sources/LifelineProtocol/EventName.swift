/// The name of a lifecycle event: a built-in name from ``EventCatalog`` (no dots, e.g.
/// `didEnterBackground`) or a custom name with a namespace (e.g. `com.example.cartDidChange`).
///
/// The naming rule: one or more segments separated by dots, each segment a letter or `_` followed by
/// letters, digits, `_` or `-`; at most ``maximumLength`` UTF-8 bytes. A name without a dot must be in
/// the catalog; a name with a dot is custom and may be used freely.
public struct EventName: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The longest accepted name, in UTF-8 bytes.
    public static let maximumLength = 200

    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
    public static func < (lhs: EventName, rhs: EventName) -> Bool { lhs.rawValue < rhs.rawValue }

    /// True for names with a namespace (custom events).
    public var isCustom: Bool {
        // Over the contiguous bytes: the generic `contains` of the UTF-8 view is several times slower.
        rawValue.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: ".")) }
            ?? rawValue.utf8.contains(UInt8(ascii: "."))
    }

    /// True when `other` is this name byte for byte (`==` on the names compares their text as Unicode
    /// does: "K" equals the Kelvin sign, which the naming rule refuses).
    public func isIdentical(to other: EventName) -> Bool {
        ByteComparison.equal(rawValue, other.rawValue)
    }

    /// The bus topic of this name: its UTF-8 bytes and a NUL (see ``BusMessage/topic(for:)``).
    package var topic: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rawValue.utf8.count + 1)
        bytes.append(contentsOf: rawValue.utf8)
        bytes.append(0)
        return bytes
    }

    /// Checks the naming rule only (not whether a built-in name exists); returns why it fails, or nil.
    public static func syntaxProblem(in text: String) -> String? {
        let bytes = text.utf8
        if bytes.isEmpty { return "an event name cannot be empty" }
        if bytes.count > maximumLength { return "an event name is at most \(maximumLength) bytes" }
        var segmentStart = true
        for byte in bytes {
            let isLetter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            if byte == UInt8(ascii: ".") {
                if segmentStart { return "'\(text)' has an empty segment between dots" }
                segmentStart = true
                continue
            }
            if segmentStart {
                guard isLetter || byte == UInt8(ascii: "_") else {
                    return "each segment of '\(text)' must start with a letter or '_'"
                }
                segmentStart = false
            } else if !(isLetter || isDigit || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")) {
                return "'\(text)' may contain only letters, digits, '_', '-' and '.'"
            }
        }
        if segmentStart { return "'\(text)' ends with a dot" }
        return nil
    }
}

extension EventName {
    public static let didFinishLaunching: EventName = "didFinishLaunching"
    public static let willResignActive: EventName = "willResignActive"
    public static let didEnterBackground: EventName = "didEnterBackground"
    public static let willEnterForeground: EventName = "willEnterForeground"
    public static let didBecomeActive: EventName = "didBecomeActive"
    public static let willTerminate: EventName = "willTerminate"
    public static let didReceiveMemoryWarning: EventName = "didReceiveMemoryWarning"
    public static let openURL: EventName = "openURL"
    public static let didReceiveRemoteNotification: EventName = "didReceiveRemoteNotification"
    public static let didRegisterForRemoteNotifications: EventName = "didRegisterForRemoteNotifications"
    public static let didFailToRegisterForRemoteNotifications: EventName =
        "didFailToRegisterForRemoteNotifications"
    public static let didReceiveLocalNotification: EventName = "didReceiveLocalNotification"
    public static let handleActionForLocalNotification: EventName = "handleActionForLocalNotification"
    public static let continueUserActivity: EventName = "continueUserActivity"
    public static let performActionForShortcutItem: EventName = "performActionForShortcutItem"
    public static let performFetch: EventName = "performFetch"
    public static let handleWatchKitExtensionRequest: EventName = "handleWatchKitExtensionRequest"
    public static let serviceDidStart: EventName = "serviceDidStart"
    public static let serviceDidStop: EventName = "serviceDidStop"
    public static let serviceInstanceDidJoin: EventName = "serviceInstanceDidJoin"
    public static let serviceInstanceDidLeave: EventName = "serviceInstanceDidLeave"
    public static let beforeDidFinishLaunching: EventName = "beforeDidFinishLaunching"
    public static let afterDidFinishLaunching: EventName = "afterDidFinishLaunching"
    public static let dispatchDidComplete: EventName = "dispatchDidComplete"
    public static let appDidStart: EventName = "appDidStart"
    public static let appDidExit: EventName = "appDidExit"
    public static let appDidCrash: EventName = "appDidCrash"
    public static let dispatchDidStep: EventName = "dispatchDidStep"
    public static let callDidFinish: EventName = "callDidFinish"
    public static let bootDidStart: EventName = "bootDidStart"
    public static let bootTaskDidFinish: EventName = "bootTaskDidFinish"
    public static let bootDidFinish: EventName = "bootDidFinish"
}
