// C11 atomics for words that several processes share through a mapping.
#include "ChronoAtomics.h"
#include <stdatomic.h>

// chrono_atomic_load and chrono_atomic_store are inline in the header.

uint64_t chrono_atomic_add(uint64_t *address, uint64_t value) {
    return atomic_fetch_add_explicit((_Atomic uint64_t *)address, value, memory_order_seq_cst) + value;
}

uint64_t chrono_atomic_raise(uint64_t *address, uint64_t value) {
    uint64_t current = atomic_load_explicit((_Atomic uint64_t *)address, memory_order_seq_cst);
    while (current < value) {
        if (atomic_compare_exchange_weak_explicit((_Atomic uint64_t *)address, &current, value,
                                                  memory_order_seq_cst, memory_order_seq_cst)) {
            return value;
        }
    }
    return current;
}

int chrono_atomic_compare_exchange(uint64_t *address, uint64_t expected, uint64_t desired) {
    return atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)address, &expected, desired,
                                                   memory_order_seq_cst, memory_order_seq_cst);
}

void chrono_atomic_fence(void) { atomic_thread_fence(memory_order_seq_cst); }
