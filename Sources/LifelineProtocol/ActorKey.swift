/// The key of an actor a service hosts by key (`cart/ana`: the service `cart`, the key `ana`).
package enum ActorKey {
    /// Longest accepted key, in UTF-8 bytes.
    public static let maximumLength = 128

    /// Why `key` is not a valid actor key; nil when it is. A key is 1–128 bytes of ASCII letters,
    /// digits and `_ - . : @ + = /`.
    public static func problem(_ key: String) -> String? {
        if key.isEmpty { return "an actor key cannot be empty" }
        if key.utf8.count > maximumLength {
            return "an actor key is at most \(maximumLength) bytes, got \(key.utf8.count)"
        }
        let allowed = key.utf8.allSatisfy { byte in
            let lower = byte | 0x20
            return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || Self.punctuation.contains(byte)
        }
        return allowed
            ? nil : "actor key '\(key)' may contain only letters, digits and _ - . : @ + = /"
    }

    private static let punctuation: Set<UInt8> = Set("_-.:@+=/".utf8)

    /// Splits `cart/ana` into the service `cart` and the key `ana` (the key may hold more `/`); a
    /// name without `/` is a service alone.
    public static func split(_ address: String) -> (service: String, key: String?) {
        guard let slash = address.firstIndex(of: "/") else { return (address, nil) }
        return (String(address[..<slash]), String(address[address.index(after: slash)...]))
    }
}
