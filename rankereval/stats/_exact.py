"""Exact sums of doubles: the same bits whatever the order of the terms and the blocks.

A mean computed in one block, in a Dask partition tree, across the batches of a training loop
or the processes of a ``torch.distributed`` job is bit for bit the same double: the sum of its
terms is kept exactly (base-2**32 digits of integer multiples of 2**-1074, added by the
kernels of ``_bootstrap.pyx``, see ``exact_sums`` there), and rounded once, correctly, at the
end. Blocks of the same sums add digit by digit (:meth:`ExactSum.__add__`).
"""
import math

import numpy as np

import rankereval.stats._bootstrap as _bootstrap

__all__ = ["ExactSum", "exact_mean", "ratio_mean", "poisson_sums"]

_LIMBS = _bootstrap.EXACT_LIMBS_
_HALF = np.int64(1 << 31)


def _carry(limbs):
    """Digits of ``limbs`` (shape (k, ...)) brought into [-2**31, 2**31), one more on top."""
    out = np.concatenate([limbs, np.zeros((1,) + limbs.shape[1:], dtype=np.int64)])
    for d in range(out.shape[0] - 1):
        c = (out[d] + _HALF) >> 32
        out[d] -= c << 32
        out[d + 1] += c
    return out


class ExactSum:
    """An array of sums of doubles kept exactly.

    ``limbs`` has shape ``(k,) + shape``: digit ``d`` of each sum has the weight
    ``2 ** (32 * (lo + d) - 1074)``; ``inf`` flags infinite terms (1: +inf, 2: -inf).
    Made by :meth:`from_kernel` from a kernel's output; added with ``+``; rounded once by
    :meth:`to_float`. Picklable; :meth:`state` / :meth:`from_state` give plain NumPy arrays.
    """

    __slots__ = ("lo", "limbs", "inf")

    def __init__(self, lo, limbs, inf):
        self.lo = int(lo)
        self.limbs = limbs
        self.inf = inf

    @classmethod
    def from_kernel(cls, limbs, inf):
        """Trim the all-zero top and bottom digits of a kernel's ``(EXACT_LIMBS, ...)`` limbs."""
        nz = np.flatnonzero(limbs.reshape(limbs.shape[0], -1).any(axis=1))
        if not nz.size:
            return cls(0, limbs[:0].copy(), inf)
        return cls(int(nz[0]), limbs[nz[0]:nz[-1] + 1].copy(), inf)

    @classmethod
    def zeros(cls, shape):
        shape = tuple(shape)
        return cls(0, np.zeros((0,) + shape, dtype=np.int64), np.zeros(shape, dtype=np.int8))

    @property
    def shape(self):
        return self.inf.shape

    def __add__(self, other):
        if not isinstance(other, ExactSum):
            return NotImplemented
        if other.shape != self.shape:
            raise ValueError(f"cannot add exact sums of shapes {self.shape} and {other.shape}")
        if not other.limbs.shape[0]:
            return ExactSum(self.lo, self.limbs.copy(), self.inf | other.inf)
        if not self.limbs.shape[0]:
            return ExactSum(other.lo, other.limbs.copy(), self.inf | other.inf)
        lo = min(self.lo, other.lo)
        hi = max(self.lo + self.limbs.shape[0], other.lo + other.limbs.shape[0])
        total = np.zeros((hi - lo,) + self.shape, dtype=np.int64)
        for s in (self, other):
            total[s.lo - lo:s.lo - lo + s.limbs.shape[0]] += s.limbs
        return ExactSum.from_kernel(_carry(total), self.inf | other.inf)._shift(lo)

    def _shift(self, lo):
        self.lo += lo
        return self

    def to_float(self):
        """The correctly rounded double of each sum (round half to even), as float64."""
        out = np.zeros(self.shape, dtype=np.float64)
        flat = out.reshape(-1)
        if self.limbs.shape[0]:
            digits = self.limbs.reshape(self.limbs.shape[0], -1)
            acc = np.zeros(digits.shape[1], dtype=object)
            for d in range(digits.shape[0] - 1, -1, -1):
                acc = (acc << 32) + digits[d].astype(object)
            shift = 32 * self.lo - 1074
            num_shift, den = max(shift, 0), 1 << max(-shift, 0)
            for i, a in enumerate(acc):
                if a:
                    try:
                        flat[i] = (a << num_shift) / den  # int / int: correctly rounded
                    except OverflowError:
                        flat[i] = math.inf if a > 0 else -math.inf
        flags = self.inf.reshape(-1)
        if flags.any():
            flat[flags == 1] = math.inf
            flat[flags == 2] = -math.inf
            flat[flags == 3] = math.nan
        return out

    def state(self):
        """Plain NumPy arrays: ``{'lo': int64 scalar array, 'limbs': ..., 'inf': ...}``."""
        return {"lo": np.array(self.lo, dtype=np.int64), "limbs": self.limbs.copy(), "inf": self.inf.copy()}

    @classmethod
    def from_state(cls, state, shape=None):
        limbs = np.array(state["limbs"], dtype=np.int64)
        inf = np.array(state["inf"], dtype=np.int8)
        if limbs.shape[1:] != inf.shape or (shape is not None and inf.shape != tuple(shape)):
            raise ValueError(f"an exact sum of shape {tuple(shape) if shape is not None else inf.shape} "
                             f"cannot have digits of shape {limbs.shape} and flags of shape {inf.shape}")
        lo = int(state["lo"])
        if lo < 0 or lo + limbs.shape[0] > _LIMBS + 64:
            raise ValueError(f"exact sum digits out of range (lo={lo}, {limbs.shape[0]} digits)")
        return cls(lo, limbs, inf)

    def __reduce__(self):
        return (ExactSum, (self.lo, self.limbs, self.inf))

    def __repr__(self):
        return f"ExactSum(shape={self.shape}, digits {self.lo}..{self.lo + self.limbs.shape[0]})"


def exact_column_sums(x):
    """:class:`ExactSum` of the columns of a 2-D array (NaN entries take no part)."""
    return ExactSum.from_kernel(*_bootstrap.exact_sums(np.ascontiguousarray(x, dtype=np.float64)))


def exact_mean(scores):
    """The mean of a 1-D array of scores: its correctly rounded sum divided by its size
    (NaN for none); every mean of rankereval, in one block or merged from many."""
    scores = np.asarray(scores, dtype=np.float64)
    if not scores.size:
        return float("nan")
    if np.isnan(scores).any():
        return float("nan")
    return float(exact_column_sums(scores.reshape(-1, 1)).to_float()[0]) / scores.size


def weighted_terms(scores, weights):
    """``w * x`` of each query, 0 where the weight is 0 (whatever ``x``): the terms of the
    numerator of a weighted mean, the same bits in every entry point."""
    with np.errstate(invalid="ignore"):
        return np.where(weights == 0.0, 0.0, weights * scores)


def ratio_mean(scores, weights):
    """``sum(w * x) / sum(w)``, each sum exact and rounded once (the weighted mean of every
    entry point); NaN for no scores, a NaN score or a zero total weight."""
    scores = np.asarray(scores, dtype=np.float64)
    if not scores.size or np.isnan(scores).any():
        return float("nan")
    sums = exact_column_sums(np.column_stack([weighted_terms(scores, weights), weights])).to_float()
    return float(sums[0]) / float(sums[1]) if sums[1] != 0 else float("nan")


def poisson_exact(x, keys, seed, n_resamples, n_threads=1):
    """The Poisson bootstrap's per-resample sums of the columns of ``x`` as an
    :class:`ExactSum` of shape ``(m, B)``, and the weights (``_bootstrap.poisson_exact``)."""
    limbs, inf, weights = _bootstrap.poisson_exact(np.ascontiguousarray(x, dtype=np.float64), keys,
                                                   seed, n_resamples, n_threads)
    return ExactSum.from_kernel(limbs, inf), weights


def poisson_sums(x, keys, seed, n_resamples, n_threads=1):
    """``(sums, weights)``, shape ``(m, B)`` each, float64: ``sums[j, b] = sum_i w[i, b] *
    x[i, j]`` correctly rounded, over the rows where ``x[i, j]`` is not NaN."""
    sums, weights = poisson_exact(x, keys, seed, n_resamples, n_threads)
    return sums.to_float(), weights
