/* Size limits shared by the kernels; rankereval/_validation.py reads the same numbers
 * through rankereval.data._convert (bitset_fits), so each is written once, here. */
#ifndef RANKEREVAL_LIMITS_H
#define RANKEREVAL_LIMITS_H
#include <stdint.h>

/* A per-thread bitset over the item ids (duplicate checks of the conversions, label
 * lookups of the metric kernel) is used for at most 2**26 ids: 8 MiB per thread, the most
 * worth allocating and clearing per call on a machine with an L2 of a few MiB ... */
#define RE_BITSET_MAX_BITS (1LL << 26)
/* ... and for at most 64 bits per id processed (plus 64 Ki bits): beyond that, zeroing
 * the bitset costs more than the lookups it saves, and hashing or searching wins. */
#define RE_BITSET_BITS_PER_ID 64
#define RE_BITSET_MIN_BITS 65536

static inline int re_bitset_fits(int64_t n_bits, int64_t n_ids) {
    return n_bits <= RE_BITSET_MAX_BITS && n_bits <= RE_BITSET_BITS_PER_ID * n_ids + RE_BITSET_MIN_BITS;
}
#endif
