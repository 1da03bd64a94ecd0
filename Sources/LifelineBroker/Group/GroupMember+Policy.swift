import LifelineSupport

/// The policy a member's stand-in sockets admit under `--key` (the leader's server reads its own).
extension GroupMember {
    /// The keys of the policy at `path` (nil: none, so any key).
    static func policyKeys(at path: String?) throws(GroupSetupError) -> [String: String]? {
        guard let path else { return nil }
        do {
            return try AccessPolicy(path: path).names
        } catch {
            throw GroupSetupError(error.message)
        }
    }

    /// A function any thread may call to read the policy again (SIGHUP) for the stand-in sockets: a
    /// key it drops can no longer complete a handshake with this member while it stands by.
    package var policyReloader: @Sendable () -> Void {
        let (policyPath, zap, log) = (self.policyPath, self.zap, self.log)
        return {
            guard let policyPath, let zap else { return }
            do throws(GroupSetupError) {
                zap.update(.init(try Self.policyKeys(at: policyPath)), domain: ZAPHandler.brokerDomain)
            } catch {
                log("the stand-in sockets keep the old policy: \(error.message)")
            }
        }
    }
}
