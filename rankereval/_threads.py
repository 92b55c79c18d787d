"""One thread-count policy for every kernel (the shape of scikit-learn's
``_openmp_effective_n_threads``).

Every kernel call in the package asks :func:`effective_n_threads` how many OpenMP threads to
use. The answer honours ``OMP_NUM_THREADS`` and :func:`threadpoolctl.threadpool_limits`
(both act on ``omp_get_max_threads()``, which is what is read here, at call time), and is 1
for jobs too small to pay for waking a second thread.
"""
import rankereval._utils._runtime as _runtime

#: below this many elements of work a kernel runs on one thread: waking a second thread
#: (and, on a busy machine, waiting for the OS to schedule it) costs more than it saves
PARALLEL_MIN_WORK = 500_000


def effective_n_threads(work=None):
    """Threads for a kernel over ``work`` elements (``None``: as many as OpenMP allows).

    Returns ``omp_get_max_threads()`` at the time of the call (so ``OMP_NUM_THREADS`` and
    ``threadpoolctl.threadpool_limits(n, user_api="openmp")`` apply), at least 1, and 1
    when ``work`` is below :data:`PARALLEL_MIN_WORK` or the package was built without OpenMP.
    """
    if work is not None and work < PARALLEL_MIN_WORK:
        return 1
    return max(1, _runtime.openmp_max_threads())
