# OpenMP shim: the package builds and runs without OpenMP (then everything runs on one thread).
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int rankereval_omp_max_threads(void) { return omp_get_max_threads(); }
    static int rankereval_omp_thread_num(void) { return omp_get_thread_num(); }
    #else
    static int rankereval_omp_max_threads(void) { return 1; }
    static int rankereval_omp_thread_num(void) { return 0; }
    #endif
    """
    int rankereval_omp_max_threads() nogil
    int rankereval_omp_thread_num() nogil
