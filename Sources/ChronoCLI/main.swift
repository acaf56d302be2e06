// The `chrono` entry point: run the command line and exit with its code.
import Foundation

do {
    exit(ChronoTool.run(try CommandLineText.arguments()).rawValue)
} catch {
    let failure = CommandFailure(error)
    let text = "chrono: \(failure.message)\n" + HelpText.usage(for: nil, arguments: []) + "\n"
    FileHandle.standardError.write(Data(text.utf8))
    exit(failure.exitCode.rawValue)
}
