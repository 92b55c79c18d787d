# C types shared by the typed kernels, named once.
#
# Item ids and CSR indices use a fixed width chosen by the data layer: int32 while every id
# fits (half the memory traffic of int64 in the hot loops) and int64 once an id reaches 2**31.
# The fused types below let one kernel source serve both widths without copies.
from libc.stdint cimport int8_t, int32_t, int64_t, uint32_t, uint64_t

ctypedef double float64_t
ctypedef float float32_t

# ids stored in a label row (CSR indices)
ctypedef fused label_idx_t:
    int32_t
    int64_t

# ids stored in a ranking row (padded 2-D array)
ctypedef fused rank_t:
    int32_t
    int64_t

# ids read from user input (validation / conversion)
ctypedef fused in_id_t:
    int32_t
    int64_t

ctypedef fused score_t:
    float32_t
    float64_t
