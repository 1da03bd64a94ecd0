import LifelineProtocol

/// Which subscriptions the bus accepts (the broker applies them itself, XPUB manual mode): an
/// event name and its NUL (at most the longest event name), a marker `!token` (at most 128 bytes
/// of token), or the empty prefix (every event). Anything else — a 64 KiB topic, say — would only
/// grow the subscription trie, and is refused.
enum BusSubscriptionRule {
    static let maximumTokenLength = AttachHeader.maximumTokenBytes
    /// The largest message the bus socket takes from a subscriber: a subscription (its kind byte and
    /// topic) is at most 202 bytes; this leaves room for libzmq's own commands.
    static let maximumMessageBytes = 1024

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

extension BusSubscriptionRule {
    /// Why the peer holding the public key `key` may not subscribe to `topic`: an event (its name and NUL) needs a
    /// `subscribe` pattern that matches it; a bare prefix (every event starting with it) a pattern
    /// that matches the prefix followed by `*` — the empty prefix, every event, needs `*`. Markers
    /// are open to all.
    static func denial(_ topic: ArraySlice<UInt8>, key: String, in policy: AccessPolicy) -> String? {
        if topic.first == UInt8(ascii: "!") { return nil }
        let name =
            topic.last == 0
            ? String(decoding: topic.dropLast(), as: UTF8.self) : String(decoding: topic, as: UTF8.self) + "*"
        return policy.denial(publicKey: key, .subscribe(name))
    }
}
