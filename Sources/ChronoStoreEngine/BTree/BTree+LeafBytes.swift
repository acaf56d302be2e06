// Leaf copy-on-write on page bytes: a put or delete that needs no split or merge copies the page's entries.

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

    /// Removes entry `key` from the committed leaf page `view` by writing a copy of the page
    /// without it on a fresh page (the old one is released), when what remains is at least a
    /// quarter page, so no merge with a neighbour would follow.
    /// - Returns: the leaf's new reference and the removed value, or nil when the leaf is not
    ///   committed, lacks the key, or would become small (nothing changed: the caller decodes it).
    func removeFromLeafPage(
        _ view: LeafView, key: UnsafeRawBufferPointer, at reference: PageReference, editor: some TreeEditing
    ) throws -> (reference: PageReference, removed: LeafValue)? {
        guard reference.birth != editor.transaction, view.count > 1 else { return nil }
        let (index, found) = view.search(key)
        guard found else { return nil }
        var total = NodeLayout.leafBaseByteCount
        for entry in 0..<view.count where entry != index { total += view.entryByteCount(entry) }
        guard total >= editor.pageSize / 4 else { return nil }
        let removed = view.value(at: index)
        let buffer = PageBuffer(pageSize: editor.pageSize)
        NodeLayout.encodeRemoving(view, index: index, into: buffer)
        let page = try editor.allocatePage(owner: owner)
        editor.releasePage(reference, owner: owner)
        editor.setDirty(page, .raw(buffer, kind: .leaf, count: view.count - 1))
        return (PageReference(page: page, birth: editor.transaction), removed)
    }
}
