/* Row kernels of Rankings.from_ranked_indices for a C-contiguous 2-D id array
 * (copy_dense_ids in data/_convert.pyx): copy one row into the int32 storage while OR-ing its
 * ids (the range check), and check the row for a repeated id.
 *
 * The conversion reads 8 bytes and writes 4 per id of a large array, so it is bound by
 * memory traffic; the duplicate check is bound by one load and one store per id into a
 * per-thread table. The caller overlaps the two (the input of rows a few iterations ahead is
 * prefetched while this row is checked) and, for an output larger than the caches, writes
 * it with streaming stores: they skip the read of each output line that an ordinary store
 * makes first (a quarter of the traffic for int64 input). Measured on this project's
 * benchmark machine (200k rows x 100 ids, output already faulted in): copy + check 34 ->
 * 23 ms on 2 threads, 62 -> 42 ms on 1, against separate copy and check passes.
 */
#ifndef RANKEREVAL_DENSE_H
#define RANKEREVAL_DENSE_H

#include <cstdint>
#include <cstddef>

#include "../metrics/_lookup.h" /* re_prefetch, RE_RESTRICT, RE_HAVE_SSE2 */

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux >= 5.14; older kernels refuse it (EINVAL) */
#endif
#endif

/* q[0:m] = p[0:m] cast to Q; returns the OR of p[0:m] as unsigned, so the row fits in
 * [0, 2**31) exactly when the result is below 2**31 (a negative id sets the top bit). What is
 * written is meaningful only then. The OR also bounds the row's largest id: both have the
 * same highest set bit, which is all the caller's table sizing needs. A loop the compiler
 * vectorises. */
template <typename T, typename Q>
static inline uint64_t re_copy_or_plain(const T* RE_RESTRICT p, Q* RE_RESTRICT q, Py_ssize_t m) {
    uint64_t bits = 0;
    for (Py_ssize_t j = 0; j < m; ++j) {
        bits |= (uint64_t) p[j];
        q[j] = (Q) p[j];
    }
    return bits;
}

#if RE_HAVE_SSE2
/* The int32 values of the 4 ids at p, with the ids OR-ed into acc. */
static inline __m128i re_load4(const int64_t* p, __m128i& acc) {
    const __m128i a = _mm_loadu_si128((const __m128i*) p);
    const __m128i b = _mm_loadu_si128((const __m128i*) (p + 2));
    acc = _mm_or_si128(acc, _mm_or_si128(a, b));
    /* the low 32 bits of each 64-bit id (little-endian: dwords 0 and 2 of each) */
    return _mm_unpacklo_epi64(_mm_shuffle_epi32(a, _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 0, 2, 0)));
}

static inline __m128i re_load4(const int32_t* p, __m128i& acc) {
    const __m128i a = _mm_loadu_si128((const __m128i*) p);
    acc = _mm_or_si128(acc, a);
    return a;
}

/* The OR of the ids accumulated by re_load4 (for int32, a negative id sets bit 31). */
static inline uint64_t re_fold(__m128i acc, const int64_t*) {
    uint64_t lanes[2];
    _mm_storeu_si128((__m128i*) lanes, acc);
    return lanes[0] | lanes[1];
}

static inline uint64_t re_fold(__m128i acc, const int32_t*) {
    uint32_t lanes[4];
    _mm_storeu_si128((__m128i*) lanes, acc);
    return lanes[0] | lanes[1] | lanes[2] | lanes[3];
}
#endif

/* re_copy_or_plain, written with streaming stores when stream is set. Those need 16-byte
 * aligned targets: plain copy up to the first aligned address of q, then 4 ids per store,
 * then a plain tail. */
template <typename T>
static inline uint64_t re_copy_or(const T* RE_RESTRICT p, int32_t* RE_RESTRICT q, Py_ssize_t m,
                                  bool stream) {
#if RE_HAVE_SSE2
    if (stream) {
        Py_ssize_t j = 0;
        while (j < m && ((uintptr_t) (q + j) & 15)) ++j;
        uint64_t bits = re_copy_or_plain(p, q, j);
        __m128i acc = _mm_setzero_si128();
        for (; j + 4 <= m; j += 4)
            _mm_stream_si128((__m128i*) (q + j), re_load4(p + j, acc));
        return bits | re_fold(acc, p) | re_copy_or_plain(p + j, q + j, m - j);
    }
#endif
    (void) stream;
    return re_copy_or_plain(p, q, m);
}

/* Fault in the whole pages of p[0:nbytes] for writing, from the calling thread, in one
 * system call (Linux; elsewhere, or where the kernel refuses, the pages fault in as they are
 * written). Why: the large output of copy_dense_ids is new memory at every call, and when
 * two threads fault it in, the pages the other thread takes come from outside the freeing
 * thread's per-CPU free lists -- on this project's benchmark VM (free page reporting: freed
 * memory is handed back to the host) the first several calls then spent 100 ms instead of
 * 30 in page faults. Faulted in here, from the thread that also frees the previous result,
 * they took a steady 38 ms: the price is zeroing the pages on one thread. */
static inline void re_populate_write(void* p, size_t nbytes) {
#if defined(__linux__)
    const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    const uintptr_t start = ((uintptr_t) p + page - 1) & ~(page - 1);
    const uintptr_t end = ((uintptr_t) p + nbytes) & ~(page - 1);
    if (end > start) (void) madvise((void*) start, end - start, MADV_POPULATE_WRITE);
#else
    (void) p; (void) nbytes;
#endif
}

/* Make this thread's streaming stores visible to the others (they are weakly ordered). */
static inline void re_stream_fence() {
#if RE_HAVE_SSE2
    _mm_sfence();
#endif
}

/* Whether p[0:m] (ids in [0, stamp capacity)) repeats an id. Each row gets a new stamp value
 * e, so the table needs no clearing between rows; the loop has no branch and keeps two
 * independent flags (two ids per iteration) so the compare of one id does not wait for the
 * other's. */
template <typename T>
static inline bool re_dup_stamped(const T* RE_RESTRICT p, Py_ssize_t m, uint16_t* RE_RESTRICT stamps,
                                  uint16_t e) {
    int d0 = 0, d1 = 0;
    Py_ssize_t j = 0;
    for (; j + 2 <= m; j += 2) {
        const T a = p[j], b = p[j + 1];
        const uint16_t sa = stamps[a];
        stamps[a] = e;
        const uint16_t sb = stamps[b];
        stamps[b] = e;
        d0 |= sa == e;
        d1 |= sb == e;
    }
    if (j < m) {
        d0 |= stamps[p[j]] == e;
        stamps[p[j]] = e;
    }
    return (d0 | d1) != 0;
}

#endif
