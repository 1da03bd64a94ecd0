/// A reason the broker will not start with its security settings (or its policy file).
package struct SecurityError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
