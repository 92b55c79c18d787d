/* One pass over a block of TREC text (scan_block in _text.pyx): line ends, empty lines,
 * spaces that do not separate two fields, and bytes the readers rewrite before parsing.
 *
 * The loop is written so that compilers vectorise it at their baseline instruction set
 * (SSE2 on x86-64, NEON on arm64): byte-wide counters over stretches of 255 bytes (they
 * cannot overflow), comparisons as byte masks, and the set of special bytes as two range
 * tests, since an OR of equalities is turned into a 64-bit bit test that does not vectorise.
 * Measured on a 64 MB run file block: 0.03 s, against 0.3 s for the plain byte loop.
 */
#ifndef RANKEREVAL_SCAN_H
#define RANKEREVAL_SCAN_H

#include <cstddef>
#include <cstdint>

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

#endif
