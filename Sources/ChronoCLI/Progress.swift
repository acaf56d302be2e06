// A progress bar on stderr for long work, drawn only when stderr is a terminal.

/// One line of progress on stderr, redrawn in place at most ten times a second. When stderr is
/// not a terminal (a pipe, a file, a test) it draws nothing, so captured output stays clean.
final class ProgressLine {
    private let console: Console
    private let title: String
    private let unit: String
    private let clock = ContinuousClock()
    private var lastDrawn: ContinuousClock.Instant?
    private var isVisible = false
    private static let barWidth = 30

    /// - Parameters:
    ///   - title: what is in progress, such as `verify`.
    ///   - unit: what is counted, such as `pages`.
    init(console: Console, title: String, unit: String) {
        self.console = console
        self.title = title
        self.unit = unit
    }

    /// Records that `done` of `total` (or of an unknown total) units are finished.
    func update(done: Int, total: Int?) {
        guard console.showsProgress else { return }
        let now = clock.now
        if let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
        lastDrawn = now
        isVisible = true
        console.writeError("\r\u{1B}[K" + Self.line(title: title, unit: unit, done: done, total: total))
    }

    /// Erases the line, before the result or an error is printed.
    func finish() {
        guard isVisible else { return }
        isVisible = false
        console.writeError("\r\u{1B}[K")
    }

    /// `verify [###############···············]  50%  1234/2468 pages`, or without a total
    /// `apply  1234 transactions`.
    static func line(title: String, unit: String, done: Int, total: Int?) -> String {
        guard let total, total > 0 else { return "\(title)  \(done) \(unit)" }
        let fraction = min(1, Double(done) / Double(total))
        let filled = Int(fraction * Double(barWidth))
        let bar = String(repeating: "#", count: filled) + String(repeating: "·", count: barWidth - filled)
        return "\(title) [\(bar)] \(Int(fraction * 100))%  \(done)/\(total) \(unit)"
    }
}
