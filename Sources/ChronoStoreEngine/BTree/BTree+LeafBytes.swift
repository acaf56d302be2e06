// Leaf edits on page bytes: a put or delete that needs no split or merge copies a committed page's
// entries onto a new page, or edits this transaction's own leaf buffer in place.

extension BTree {
    /// Puts `value` under `key` into the committed leaf page `view` by writing a copy of the page
    /// with the edit applied on a fresh page (the old one is released), when the result fits.
    ///
    /// A leaf this transaction already holds as bytes is edited in its own buffer, up to
    /// ``dirtyLeafByteEditLimit`` times (see ``putInDirtyLeafPage(_:key:value:page:editor:)``);
    /// after that it is decoded once and edited as a node, which is cheaper for many edits of one
    /// leaf (a bulk load) than moving the page's bytes each time.
    /// - Returns: the leaf's new reference and the value replaced, or nil when the leaf is not
    ///   committed or would overflow (nothing was changed: the caller decodes it and splits it).
    func putInLeafPage(
        _ view: LeafView, key: UnsafeRawBufferPointer, value: LeafValue, at reference: PageReference,
        editor: some TreeEditing
    ) throws -> (reference: PageReference, previous: LeafValue?)? {
        guard reference.birth != editor.transaction else { return nil }
        let (index, found) = view.search(key)
        let layout = NodeLayout.leafLayout(view)
        var total = layout.byteCount + NodeLayout.leafEntryFixedByteCount + key.count + value.encodedByteCount
        if found { total -= view.entryByteCount(index) }
        guard total <= editor.pageSize else { return nil }
        let previous = found ? view.value(at: index) : nil
        let buffer = PageBuffer(uninitializedPageSize: editor.pageSize)
        if let end = layout.canonicalEnd {
            NodeLayout.encodeEditedCanonical(view, end: end, index: index, replacing: found, key: key, value: value, into: buffer)
        } else {
            NodeLayout.encodeEdited(view, index: index, replacing: found, key: key, value: value, into: buffer)
        }
        Self.markLaidOut(buffer, edits: 0)
        let count = found ? view.count : view.count + 1
        let page = try editor.allocateCopy(of: reference, owner: owner)
        editor.setDirty(page, .raw(buffer, kind: .leaf, count: count))
        return (PageReference(page: page, birth: editor.transaction), previous)
    }

    /// Edits of one leaf, within a transaction, made on its bytes; later edits decode it. The pack
    /// index, the free tree and the history trees edit most leaves once or twice a commit, where a
    /// byte edit (two block moves and a pass over the offsets) beats a decode (one allocation per
    /// entry); a leaf edited many times (a bulk load) is cheaper to edit as a node.
    static var dirtyLeafByteEditLimit: UInt8 { 16 }

    /// The limit for the engine's own trees (pack index, free tree, history trees): their leaves
    /// hold a hundred or more small entries, so a decode costs far more than in a collection
    /// (an allocation per key and value: 165 k instructions to decode a pack-index leaf and 80 k
    /// to free it, measured), and a commit edits a leaf at most about a hundred times, never as a
    /// bulk load does. The pack index's newest leaves take the most: its keys are birth first, so a
    /// packing commit's entries and chain lengths (versions born in the last few dozen roots) land
    /// in a few leaves; at a limit of 64 about one packing commit in each decoded one of them, and
    /// 127 (the most the header's count holds) took 5 % off a ten-update history commit's
    /// instructions (Performance.md, twenty-fifth session).
    static var engineLeafByteEditLimit: UInt8 { 127 }

    /// This tree's byte-edit limit.
    var byteEditLimit: UInt8 { owner == .system ? Self.engineLeafByteEditLimit : Self.dirtyLeafByteEditLimit }

    /// A dirty leaf buffer's header flags byte, until sealing writes it as 0: bit 7 says an edit
    /// laid the leaf out (``NodeLayout/canonicalLeafEnd(_:)``), bits 0–6 count the edits since
    /// it was copied from a committed page or encoded back from a node (`encodeDecodedLeaves`).
    private static let laidOutByEdit: UInt8 = 0x80

    static func markLaidOut(_ buffer: PageBuffer, edits: UInt8) {
        assert(edits < laidOutByEdit, "a byte-edit count past 127 would spill into the mark")
        buffer.bytes.storeLittleEndian(laidOutByEdit | edits, at: PageHeader.flagsOffset)
    }

    /// The byte edits made so far of a dirty leaf buffer marked as laid out for byte edits, when
    /// it may take another (``byteEditLimit``); nil when it is not marked (a page copied as it was
    /// stored, a leaf compaction built) or has taken its share, and is to be decoded. A put that
    /// overfills such a leaf is settled as bytes too, its pages carrying the count on, so a bulk
    /// load's leaves still decode after their first 16 edits (1.3 % more instructions for a bulk
    /// load than decoding at the first overflow; ten scattered batches 17 % fewer).
    func byteEditsLeft(of buffer: PageBuffer) -> UInt8? {
        let flags: UInt8 = buffer.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
        guard flags & Self.laidOutByEdit != 0 else { return nil }
        let edits = flags & ~Self.laidOutByEdit
        return edits < byteEditLimit ? edits : nil
    }

    /// Puts `value` under `key` into a leaf this transaction holds as bytes (`buffer`, on `page`),
    /// by editing the buffer in place, when it fits and the leaf has not been edited
    /// ``dirtyLeafByteEditLimit`` times already.
    /// - Returns: the page and the value replaced (nil when the key is new), or nil when nothing changed.
    func putInDirtyLeafPage(
        _ buffer: PageBuffer, key: UnsafeRawBufferPointer, value: LeafValue, page: PageID, editor: some TreeEditing
    ) -> (page: PageID, previous: LeafValue?)? {
        guard let edits = byteEditsLeft(of: buffer) else { return nil }
        let view = LeafView(page: buffer)
        let (index, found) = view.search(key)
        let end = NodeLayout.canonicalLeafEnd(view)
        var total = end + NodeLayout.leafEntryFixedByteCount + key.count + value.encodedByteCount
        if found { total -= view.entryByteCount(index) }
        guard total <= editor.pageSize else { return nil }
        let previous = found ? view.value(at: index) : nil
        let count = found ? view.count : view.count + 1
        // The buffer is this transaction's own: no reader sees it, and a scan of this transaction
        // leaves the pages it was reading when its body edits (`WriteTransaction.scan`).
        NodeLayout.editCanonicalInPlace(buffer, end: end, index: index, replacing: found, key: key, value: value)
        Self.markLaidOut(buffer, edits: edits + 1)
        editor.setDirty(page, .raw(buffer, kind: .leaf, count: count))
        return (page, previous)
    }

    /// Removes entry `index` (the caller found its key there) from a leaf this transaction holds
    /// as bytes, on its own page, under the same conditions as
    /// ``removeFromLeafPage(_:index:at:editor:)`` and the edit limit.
    /// - Returns: the removed value, or nil when nothing changed.
    func removeFromDirtyLeafPage(
        _ buffer: PageBuffer, index: Int, page: PageID, editor: some TreeEditing
    ) -> LeafValue? {
        let view = LeafView(page: buffer)
        guard let edits = byteEditsLeft(of: buffer), view.count > 1 else { return nil }
        let end = NodeLayout.canonicalLeafEnd(view)
        guard end - view.entryByteCount(index) >= editor.pageSize / 4 else { return nil }
        let removed = view.value(at: index)
        let count = view.count - 1
        NodeLayout.removeCanonicalInPlace(buffer, end: end, index: index)
        Self.markLaidOut(buffer, edits: edits + 1)
        editor.setDirty(page, .raw(buffer, kind: .leaf, count: count))
        return removed
    }

    /// Removes entry `index` (the caller found its key there) from the committed leaf page `view`
    /// by writing a copy of the page without it on a fresh page (the old one is released), when
    /// what remains is at least a quarter page, so no merge with a neighbour would follow.
    /// - Returns: the leaf's new reference and the removed value, or nil when the leaf is not
    ///   committed or would become small (nothing changed: the caller decodes it).
    func removeFromLeafPage(
        _ view: LeafView, index: Int, at reference: PageReference, editor: some TreeEditing
    ) throws -> (reference: PageReference, removed: LeafValue)? {
        guard reference.birth != editor.transaction, view.count > 1, index < view.count else { return nil }
        let layout = NodeLayout.leafLayout(view)
        guard layout.byteCount - view.entryByteCount(index) >= editor.pageSize / 4 else { return nil }
        let removed = view.value(at: index)
        let buffer = PageBuffer(uninitializedPageSize: editor.pageSize)
        if let end = layout.canonicalEnd {
            NodeLayout.encodeRemovingCanonical(view, end: end, index: index, into: buffer)
        } else {
            NodeLayout.encodeRemoving(view, index: index, into: buffer)
        }
        Self.markLaidOut(buffer, edits: 0)
        let page = try editor.allocateCopy(of: reference, owner: owner)
        editor.setDirty(page, .raw(buffer, kind: .leaf, count: view.count - 1))
        return (PageReference(page: page, birth: editor.transaction), removed)
    }
}
