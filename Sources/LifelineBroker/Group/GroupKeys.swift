import Foundation
import LifelineSupport
import ZeroMQ

/// The CURVE keys of a group's members (`--group-keys DIR`): this member's key pair, from
/// `DIR/MEMBER.key` (mode 0600), and every member's public key, from `DIR/NAME.pub` (or a key pair
/// file `DIR/NAME.key` where there is no `.pub`). The group socket admits these keys only, and a
/// message speaks for the member whose key sent it.
package struct GroupKeys: Sendable {
    /// This member's key pair.
    package let pair: CurveKeyPair
    /// Every member's public key (Z85), this member's included.
    package let publicKeys: [String: String]

    package init(pair: CurveKeyPair, publicKeys: [String: String]) {
        self.pair = pair
        self.publicKeys = publicKeys
    }

    /// Reads the keys of `members` from `directory`.
    /// - Throws: ``GroupSetupError`` naming the file that is missing, unreadable, readable by others
    ///   (a secret key), or a key two members share.
    package static func load(directory: String, member: String, members: [String]) throws(GroupSetupError)
        -> GroupKeys
    {
        let path = { (file: String) in (directory as NSString).appendingPathComponent(file) }
        let pair: CurveKeyPair
        do {
            let (_, secret) = try KeyFile.readPair(path("\(member).key"))
            pair = try CurveKeyPair(secretKey: secret)
        } catch let problem as KeyFile.Problem {
            throw GroupSetupError(
                "--group-keys: \(problem.description) (this member's key pair: lifeline keys new \(member) --dir \(directory))"
            )
        } catch {
            throw GroupSetupError("--group-keys: \(path("\(member).key")) holds no valid CURVE secret key")
        }
        var keys: [String: String] = [member: pair.publicKey]
        for name in members where name != member {
            let file =
                FileManager.default.fileExists(atPath: path("\(name).pub")) ? "\(name).pub" : "\(name).key"
            do {
                let key = try KeyFile.publicKey(path(file))
                guard CurveKeyPair.isKey(key) else {
                    throw GroupSetupError("--group-keys: \(path(file)) holds no valid CURVE public key")
                }
                keys[name] = key
            } catch let problem as KeyFile.Problem {
                throw GroupSetupError(
                    "--group-keys: member \(name)'s public key: \(problem.description) (expected \(path("\(name).pub")))"
                )
            } catch {
                throw error as? GroupSetupError ?? GroupSetupError("\(error)")
            }
        }
        let byKey = Dictionary(grouping: keys.keys, by: { keys[$0] ?? "" })
        if let shared = byKey.values.first(where: { $0.count > 1 }) {
            throw GroupSetupError(
                "--group-keys: members \(shared.sorted().joined(separator: " and ")) have the same public key; each member needs a key pair of its own"
            )
        }
        return GroupKeys(pair: pair, publicKeys: keys)
    }

    /// The member whose public key is `key`, if any.
    package func member(withKey key: String?) -> String? {
        guard let key else { return nil }
        return publicKeys.first { $0.value == key }?.key
    }

    /// The allow-list for the group socket's ZAP handler: public key → member.
    package var allowList: [String: String] {
        Dictionary(publicKeys.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
    }
}
