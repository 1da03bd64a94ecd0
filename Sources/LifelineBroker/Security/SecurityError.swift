/// A reason the broker will not start with its security settings (or its policy file).
public struct SecurityError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
