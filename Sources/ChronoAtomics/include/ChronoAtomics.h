// Sequentially consistent 64-bit atomics on shared memory (the lock file's mapped words).
#ifndef CHRONO_ATOMICS_H
#define CHRONO_ATOMICS_H

#include <stdint.h>

/// Loads the word at `address` (8-byte aligned), ordered with every other atomic access.
uint64_t chrono_atomic_load(const uint64_t *address);

/// Stores `value` at `address`.
void chrono_atomic_store(uint64_t *address, uint64_t value);

/// Adds `value` to the word at `address`; returns the new value.
uint64_t chrono_atomic_add(uint64_t *address, uint64_t value);

/// Raises the word at `address` to at least `value`; returns the value it holds afterwards.
uint64_t chrono_atomic_raise(uint64_t *address, uint64_t value);

/// Replaces `expected` with `desired`; returns whether the word held `expected`.
int chrono_atomic_compare_exchange(uint64_t *address, uint64_t expected, uint64_t desired);

/// A full memory fence.
void chrono_atomic_fence(void);

#endif
