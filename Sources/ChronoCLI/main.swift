// The `chrono` entry point: run the command line and exit with its code.
import Foundation

exit(ChronoTool.run(Array(CommandLine.arguments.dropFirst())).rawValue)
