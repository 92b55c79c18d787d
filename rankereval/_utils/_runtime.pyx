"""What the compiled build knows at run time, for the package-wide Python policies: the
threads an OpenMP region would use (``rankereval._threads``) and whether a per-thread bitset
over the item ids pays (``rankereval._validation.bitset_fits``; the limits are ``_limits.h``'s,
which the kernels include). A module of its own, so that the thread policy and the argument
checks import no kernel of a layer."""
from rankereval._typedefs cimport int64_t
from rankereval._utils._openmp cimport rankereval_omp_max_threads


cdef extern from "_limits.h":
    long long RE_BITSET_MAX_BITS
    bint re_bitset_fits(int64_t n_bits, int64_t n_ids) noexcept nogil

BITSET_MAX_BITS = RE_BITSET_MAX_BITS


def openmp_max_threads():
    """Threads an OpenMP region would use now (OMP_NUM_THREADS, threadpoolctl limits); 1 without OpenMP."""
    return rankereval_omp_max_threads()


def bitset_fits(int64_t n_bits, int64_t n_ids):
    """Whether a per-thread bitset of ``n_bits`` bits pays for ``n_ids`` ids (``_limits.h``)."""
    return re_bitset_fits(n_bits, n_ids)
