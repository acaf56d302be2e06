// Sequentially consistent 64-bit atomics on shared memory (the lock file's mapped words).
#ifndef CHRONO_ATOMICS_H
#define CHRONO_ATOMICS_H

#include <stdint.h>
#include <stdatomic.h>

/// Loads the word at `address` (8-byte aligned), ordered with every other atomic access.
/// Inline, like the store: every page read through the memory map loads a word (whether its
/// version was verified), and a write transaction's start loads every reader slot (252 words);
/// a call cost more than the load.
static inline uint64_t chrono_atomic_load(const uint64_t *address) {
    return atomic_load_explicit((const _Atomic uint64_t *)address, memory_order_seq_cst);
}

/// Stores `value` at `address`.
static inline void chrono_atomic_store(uint64_t *address, uint64_t value) {
    atomic_store_explicit((_Atomic uint64_t *)address, value, memory_order_seq_cst);
}

/// Adds `value` to the word at `address`; returns the new value.
uint64_t chrono_atomic_add(uint64_t *address, uint64_t value);

/// Raises the word at `address` to at least `value`; returns the value it holds afterwards.
uint64_t chrono_atomic_raise(uint64_t *address, uint64_t value);

/// Replaces `expected` with `desired`; returns whether the word held `expected`.
int chrono_atomic_compare_exchange(uint64_t *address, uint64_t expected, uint64_t desired);

/// A full memory fence.
void chrono_atomic_fence(void);

#endif
