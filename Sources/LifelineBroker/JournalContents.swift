import LifelineProtocol

/// What a state directory's `journal.log` holds, read without running a broker (for tests and tools).
package enum JournalContents {
    /// The events of the journal at `path`, in order; none when it does not exist.
    package static func events(atPath path: String) -> [BusMessage] {
        JournalRecord.decodeAll(JournalFile.read(path)).records.compactMap {
            if case .event(let message, _, _, _) = $0 { message } else { nil }
        }
    }
}
