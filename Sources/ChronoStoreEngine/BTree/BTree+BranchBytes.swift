// Branch copy-on-write on page bytes: an edit below a branch that only changes one child pointer.

extension BTree {
    /// Points child `index` of the branch page `view` (the node at `reference`) at `child`,
    /// without decoding the branch: a branch this transaction holds as bytes is changed in
    /// place; any other (committed, or written out early) is copied onto a fresh page with the
    /// pointer replaced, and the old page is released.
    ///
    /// Most edits below a branch change only which page a child lives on (a child that splits is
    /// the exception, and the caller decodes the branch for it), and a child pointer has a fixed
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
}
