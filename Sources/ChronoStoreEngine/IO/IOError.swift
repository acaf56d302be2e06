// The error thrown when the operating system refuses a file operation.

/// A failed system call on a store's files, with the `errno` the system gave.
package struct IOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The operation that failed, such as `"pwrite"` or `"fdatasync"`.
    package var operation: String
    /// The file the operation was applied to.
    package var path: String
    /// The system's error number.
    package var code: Int32

    package init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    package var description: String {
        "\(operation) failed on \(path): \(Platform.errorDescription(code)) (errno \(code))"
    }

    /// An injected failure code used by the fault-injecting file (EIO).
    package static var injectedFailureCode: Int32 { Platform.ioFailure }
}
