// Branch copy-on-write on page bytes: a child pointer replaced in place, and the count of separator layouts.

extension BTree {
    /// Points child `index` of the branch page `view` (the node at `reference`) at `child`,
    /// without decoding the branch: a branch this transaction holds as bytes is changed in
    /// place; any other (committed, or written out early) is copied onto a fresh page with the
    /// pointer replaced, and the old page is released.
    ///
    /// Most edits below a branch change only which page a child lives on (a child that splits or
    /// spreads changes separators too, through a ``BranchEdit``), and a child pointer has a fixed
    /// size, so the copy is the page's bytes with 16 of them replaced. Decoding the branch into
    /// one array per key and encoding it again at commit cost more than the edit below it for a
    /// single put or a batch of scattered puts (issue 14).
    /// - Parameter inPlace: the branch's bytes when this transaction holds them as a dirty page.
    /// - Returns: the branch's reference after the edit.
    func replaceChildOnBytes(
        _ view: BranchView, at reference: PageReference, index: Int, with child: PageReference, inPlace: PageBuffer?,
        editor: some TreeEditing
    ) throws -> PageReference {
        let offset = view.childOffset(at: index)
        if let inPlace {
            inPlace.bytes.storeReference(child, at: offset)
            return reference
        }
        let copy = PageBuffer(uninitializedPageSize: editor.pageSize)
        copy.bytes.copyMemory(from: view.page.readOnly)
        copy.bytes.storeReference(child, at: offset)
        let page = try editor.allocateCopy(of: reference, owner: owner)
        editor.setDirty(page, .raw(copy, kind: .branch, count: view.keyCount))
        return PageReference(page: page, birth: editor.transaction)
    }

    /// Separator layouts a branch in page form takes in one transaction by default, before it is
    /// decoded (``TreeEditing/branchByteLayoutLimit``). A scattered batch settles a branch's
    /// children a few times a commit, where a layout (a pass over its entries) beats a decode (an
    /// array a key); a bulk load inserts a separator into the same branch every few puts, which
    /// a decoded branch takes with an array insert.
    static var defaultBranchByteLayoutLimit: UInt8 { 8 }

    /// A branch buffer's header flags byte, until sealing writes it as 0: bit 7 says
    /// ``settleOnBytes`` laid the branch out, bits 0–6 count such layouts in this transaction.
    static var branchLaidOutByEdit: UInt8 { 0x80 }

    static func markBranchLaidOut(_ buffer: PageBuffer, layouts: UInt8) {
        buffer.bytes.storeLittleEndian(branchLaidOutByEdit | layouts, at: PageHeader.flagsOffset)
    }

    /// The separator layouts a branch in page form has taken in this transaction, when it may
    /// take another: 0 for a committed page (`ownBytes` nil) or a byte copy not yet laid out;
    /// nil once it took the editor's limit (then it is decoded).
    func branchLayoutsTaken(of ownBytes: PageBuffer?, editor: some TreeEditing) -> UInt8? {
        var layouts: UInt8 = 0
        if let ownBytes {
            let flags: UInt8 = ownBytes.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
            if flags & Self.branchLaidOutByEdit != 0 { layouts = flags & ~Self.branchLaidOutByEdit }
        }
        return layouts < editor.branchByteLayoutLimit ? layouts : nil
    }
}
