import LifelineProtocol

/// Which subscriptions the bus accepts (the broker applies them itself, XPUB manual mode): an
/// event name and its NUL (at most the longest event name), a marker `!token` (at most 128 bytes
/// of token), or the empty prefix (every event). Anything else — a 64 KiB topic, say — would only
/// grow the subscription trie, and is refused.
enum BusSubscriptionRule {
    static let maximumTokenLength = 128

    /// Why `topic` may not be subscribed to; nil when it may.
    static func problem(_ topic: ArraySlice<UInt8>) -> String? {
        if topic.isEmpty { return nil }
        if topic.first == UInt8(ascii: "!") {
            return topic.count - 1 <= maximumTokenLength
                ? nil : "a marker token is at most \(maximumTokenLength) bytes, got \(topic.count - 1)"
        }
        let longest = EventName.maximumLength + 1
        return topic.count <= longest
            ? nil : "a topic is an event name and its NUL, at most \(longest) bytes, got \(topic.count)"
    }
}
