/* Byte-level loops of the TREC readers (_text.pyx).
 *
 * re_scan: one pass over a block of text: line ends, empty lines, spaces that do not
 * separate two fields, and bytes the readers rewrite before parsing.
 *
 * The loop is written so that compilers vectorise it at their baseline instruction set
 * (SSE2 on x86-64, NEON on arm64): byte-wide counters over stretches of 255 bytes (they
 * cannot overflow), comparisons as byte masks, and the set of special bytes as two range
 * tests, since an OR of equalities is turned into a 64-bit bit test that does not vectorise.
 * Measured on a 64 MB run file block: 0.03 s, against 0.3 s for the plain byte loop.
 */
#ifndef RANKEREVAL_SCAN_H
#define RANKEREVAL_SCAN_H

#include <Python.h> /* PyOS_string_to_double */
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../metrics/_lookup.h" /* re_prefetch (a no-op where the compiler has no prefetch builtin) */

struct re_scan_t {
    int64_t n_newlines;  /* '\n' bytes */
    int64_t n_empty;     /* lines without a byte (a '\n' at the start or after a '\n') */
    int irregular;       /* a space at a line start or end, or after another space */
    int special;         /* '#', tab, CR, vertical tab or form feed */
};

static inline unsigned char re_is_special(unsigned char c) {
    return (unsigned char)((unsigned char)(c == 35) |
                           (unsigned char)(((unsigned char)(c - 9) < 5) & (c != 10)));
}

static inline re_scan_t re_scan(const unsigned char* p, size_t n) {
    re_scan_t r = {0, 0, 0, 0};
    if (n == 0) return r;
    /* the byte before the block is taken as a line end */
    r.n_newlines = p[0] == 10;
    r.n_empty = p[0] == 10;
    r.irregular = p[0] == 32;
    r.special = re_is_special(p[0]);
    size_t i = 1;
    while (i < n) {
        size_t m = n - i < 255 ? n - i : 255;
        const unsigned char* cur = p + i;
        const unsigned char* prev = p + i - 1;
        unsigned char nl = 0, empty = 0, irr = 0, sp = 0;
        for (size_t j = 0; j < m; j++) {
            unsigned char c = cur[j], a = prev[j];
            unsigned char cn = (unsigned char)(c == 10), an = (unsigned char)(a == 10);
            unsigned char cs = (unsigned char)(c == 32), as = (unsigned char)(a == 32);
            nl = (unsigned char)(nl + cn);
            empty = (unsigned char)(empty + (cn & an));
            irr = (unsigned char)(irr | (cs & (as | an)) | (cn & as));
            sp = (unsigned char)(sp | re_is_special(c));
        }
        r.n_newlines += nl;
        r.n_empty += empty;
        r.irregular |= irr;
        r.special |= sp;
        i += m;
    }
    if (p[n - 1] == 32) r.irregular = 1; /* a space ends the last line */
    return r;
}

/* re_parse_plain: the columns of a block of plain text, as the scan found it (fields
 * separated by single spaces, no byte to rewrite), for the common case only: every line
 * (empty ones aside) has exactly n_cols fields, the ids of columns qi and di are ASCII of 1
 * to 8 bytes (packed as _text.pack_ids packs them), and the value of column vi is a plain
 * decimal number ([+-]digits[.digits], at least one digit). Anything else returns -1 and the
 * block goes to the general parser, which reads it or names the line that is wrong.
 *
 * A number with at most 2**53 as its digits (leading zeros aside) and at most 22 of them
 * after the point is m / 10**f with m and 10**f exact doubles, so one division rounds it
 * correctly (Clinger's fast path); other numbers are parsed by PyOS_string_to_double
 * (correctly rounded and locale-independent, as pyarrow's parser and Python's float),
 * which takes the GIL for the call. Called without the GIL, so that another thread can
 * give the ids of the block before their codes meanwhile. Returns the number of rows, or -1.
 */
static inline int re_pack_ascii(const unsigned char* s, size_t len, uint64_t* out) {
    if (len < 1 || len > 8) return 0;
    uint64_t w = 0;
    for (size_t k = 0; k < len; k++) {
        unsigned char c = s[k];
        if (c == 0 || c >= 0x80) return 0;
        w = (w << 8) | c;
    }
    *out = w << (8 * (8 - len));
    return 1;
}

static inline int re_parse_decimal(const unsigned char* s, size_t len, double* out) {
    static const double pow10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t k = 0;
    int neg = 0;
    if (k < len && (s[k] == '-' || s[k] == '+')) {
        neg = s[k] == '-';
        k++;
    }
    uint64_t m = 0;
    int sig = 0, frac = 0, digits = 0, dot = 0;
    for (; k < len; k++) {
        unsigned char c = s[k];
        if (c >= '0' && c <= '9') {
            digits++;
            frac += dot;
            if (m == 0 && c == '0') continue; /* a leading zero */
            if (++sig > 19) continue;         /* m would overflow: no fast path, but a number */
            m = m * 10 + (uint64_t)(c - '0');
        } else if (c == '.' && !dot) {
            dot = 1;
        } else {
            return 0;
        }
    }
    if (digits == 0) return 0;
    if (sig <= 19 && m <= ((uint64_t)1 << 53) && frac <= 22) {
        double x = (double)m;
        if (frac) x /= pow10[frac];
        *out = neg ? -x : x;
        return 1;
    }
    char text[64];
    if (len >= sizeof(text)) return 0;
    memcpy(text, s, len);
    text[len] = 0;
    char* end = NULL;
    PyGILState_STATE gil = PyGILState_Ensure(); /* called without the GIL */
    double x = PyOS_string_to_double(text, &end, NULL);
    int failed = x == -1.0 && PyErr_Occurred();
    if (failed) PyErr_Clear();
    PyGILState_Release(gil);
    if (failed || end != text + len) return 0;
    *out = x;
    return 1;
}

static inline int64_t re_parse_plain(const unsigned char* p, size_t n, int n_cols, int qi, int di, int vi,
                                     uint64_t* q, uint64_t* d, double* v, int64_t cap) {
    const unsigned char* s = p;
    const unsigned char* end = p + n;
    int64_t row = 0;
    while (s < end) {
        if (*s == '\n') { /* an empty line */
            s++;
            continue;
        }
        if (row >= cap) return -1;
        for (int f = 0;; f++) {
            const unsigned char* fs = s;
            while (s < end && *s != ' ' && *s != '\n') s++;
            size_t len = (size_t)(s - fs);
            if (f >= n_cols) return -1;
            if (f == qi) {
                if (!re_pack_ascii(fs, len, q + row)) return -1;
            } else if (f == di) {
                if (!re_pack_ascii(fs, len, d + row)) return -1;
            } else if (f == vi) {
                if (!re_parse_decimal(fs, len, v + row)) return -1;
            }
            if (s == end || *s == '\n') {
                if (f != n_cols - 1) return -1;
                if (s < end) s++;
                break;
            }
            s++; /* the space */
        }
        row++;
    }
    return row;
}

/* re_encode_ids: codes of packed ids (never 0) in order of first appearance, through an
 * open-addressing hash table of 2**bits slots (linear probing; the caller keeps it at most
 * three quarters full through `limit`, so a probe ends soon). Each slot holds its key and code together (one cache
 * line a lookup), and the slot of the id `ahead` places on is prefetched: the table of a
 * large file does not fit in the caches, and the loads of successive ids then overlap.
 * New ids are appended to uniques[*n_uniques:] and counted in *n_uniques; the loop stops
 * before an id that would make it exceed `limit` (the caller then grows the table, so that
 * the table is sized by the ids actually new, not by a bound). Returns the number of ids
 * coded.
 * (Where the time of the 2M-line run goes: docs/guide/performance.rst, command line.)
 */
struct re_slot {
    uint64_t key; /* 0: empty */
    int64_t code;
};

static inline size_t re_encode_ids(re_slot* table, int bits, const uint64_t* ids, size_t n, int32_t* codes,
                                   uint64_t* uniques, int64_t* n_uniques_io, int64_t limit) {
    int64_t n_uniques = *n_uniques_io;
    const size_t mask = ((size_t)1 << bits) - 1;
    const int shift = 64 - bits;
    const size_t ahead = 16;
    for (size_t i = 0; i < n; i++) {
        if (i + ahead < n) {
            re_prefetch(&table[(ids[i + ahead] * 0x9E3779B97F4A7C15ull) >> shift], sizeof(re_slot));
        }
        uint64_t key = ids[i];
        size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift);
        for (;;) {
            uint64_t k = table[h].key;
            if (k == key) {
                codes[i] = (int32_t)table[h].code;
                break;
            }
            if (k == 0) {
                if (n_uniques >= limit) {
                    *n_uniques_io = n_uniques;
                    return i;
                }
                table[h].key = key;
                table[h].code = n_uniques;
                uniques[n_uniques] = key;
                codes[i] = (int32_t)n_uniques++;
                break;
            }
            h = (h + 1) & mask;
        }
    }
    *n_uniques_io = n_uniques;
    return n;
}

#endif
