// The compact command: shrink the store's file.
import ChronoStoreEngine

extension Command {
    static let compact = Command(
        name: "compact", positionals: [.required("STORE")],
        summary: "shrink the file: repack the head's pages and cut the free tail",
        details: """
            Drops the roots the retention policy no longer keeps, rewrites the head's records onto
            full pages at the start of the file (one commit with the same contents, which takes
            the head's place in history, so undo is unchanged), then truncates the free tail.
            Pages that older retained roots or snapshots still reach stay where they are: prune
            or clear history first for the smallest file. Readers in other processes continue.
            With --json prints {"root":ID,"bytesBefore":N,"bytesAfter":N,"pagesMoved":N}.
            Shows a progress bar on stderr when stderr is a terminal.
            """,
        examples: ["chrono compact notes.chrono", "chrono prune notes.chrono --keep-last 1 && chrono compact notes.chrono"],
        run: runCompact)

    private static func runCompact(_ invocation: Invocation) throws {
        let progress = ProgressLine(console: invocation.console, title: "compact", unit: "pages")
        let (report, head) = try invocation.withStore { store in
            defer { progress.finish() }
            let report = try store.compact { progress.update(done: $0.pagesDone, total: $0.pagesTotal) }
            return (report, try store.snapshot.head.transaction)
        }
        if invocation.prefersJSON {
            invocation.console.print(.object([
                ("root", .id(head)), ("bytesBefore", .count(Int(report.byteCountBefore))),
                ("bytesAfter", .count(Int(report.byteCountAfter))), ("pagesMoved", .count(report.pagesMoved)),
            ]))
        } else {
            invocation.console.print(
                "Compacted: \(report.byteCountBefore) bytes before, \(report.byteCountAfter) after; "
                    + "\(report.pagesMoved) pages moved out of the tail; head is root \(head.rawValue).")
        }
    }
}
