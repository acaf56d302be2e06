// Leaf copy-on-write on page bytes: a put that fits its leaf copies the page's entries, never decodes them.

extension BTree {
    /// Puts `value` under `key` into the committed leaf page `view` by writing a copy of the page
    /// with the edit applied on a fresh page (the old one is released), when the result fits.
    ///
    /// Only the first edit of a leaf in a transaction takes this path: a leaf this transaction
    /// already wrote is decoded once and then edited as a node, which is cheaper for many edits
    /// of one leaf (a bulk load) than copying the page each time.
    /// - Returns: the leaf's new reference and the value replaced, or nil when the leaf is not
    ///   committed or would overflow (nothing was changed: the caller decodes it and splits it).
    func putInLeafPage(
        _ view: LeafView, key: UnsafeRawBufferPointer, value: LeafValue, at reference: PageReference,
        editor: some TreeEditing
    ) throws -> (reference: PageReference, previous: LeafValue?)? {
        guard reference.birth != editor.transaction else { return nil }
        let (index, found) = view.search(key)
        var total = NodeLayout.leafBaseByteCount + NodeLayout.leafEntryFixedByteCount + key.count + value.encodedByteCount
        for entry in 0..<view.count where !(found && entry == index) { total += view.entryByteCount(entry) }
        guard total <= editor.pageSize else { return nil }
        let previous = found ? view.value(at: index) : nil
        let buffer = PageBuffer(pageSize: editor.pageSize)
        NodeLayout.encodeEdited(view, index: index, replacing: found, key: key, value: value, into: buffer)
        let count = found ? view.count : view.count + 1
        let page = try editor.allocatePage(owner: owner)
        editor.releasePage(reference, owner: owner)
        editor.setDirty(page, .raw(buffer, kind: .leaf, count: count))
        return (PageReference(page: page, birth: editor.transaction), previous)
    }
}
