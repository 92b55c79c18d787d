"""Multiple-testing corrections: :func:`adjust_pvalues` (Holm, Bonferroni, Benjamini-Hochberg)
and the names of the corrections in captions.
"""
import numpy as np

from rankereval._utils._choices import CORRECTIONS
from rankereval.stats._checks import _choice, _CORRECTION_ALIASES


_CORRECTION_NAMES = {
    "holm": "Holm correction per metric",
    "bonferroni": "Bonferroni correction per metric",
    "bh": "Benjamini-Hochberg correction per metric",
    "none": "no correction",
    "tukey": "family-wise over all pairs of runs",
}


def adjust_pvalues(pvalues, method="holm"):
    """p-values adjusted for multiple testing (NaN entries are left out of the family).

    Parameters
    ----------
    pvalues : array-like of float, shape (m,)
        Raw p-values in [0, 1]; NaN marks a comparison that could not be tested: it stays
        NaN and does not count in the family.
    method : {'holm', 'bonferroni', 'bh', 'none'}, default='holm'
        Holm's step-down (family-wise error rate), Bonferroni, Benjamini-Hochberg (false
        discovery rate; ``'fdr_bh'`` is accepted as in statsmodels), or none.

    Returns
    -------
    ndarray of float64, shape (m,)
        Adjusted p-values, equal to those of
        ``statsmodels.stats.multitest.multipletests(p, method=...)[1]``; a comparison is
        significant at level alpha when its adjusted p-value is ``<= alpha``.

    Examples
    --------
    >>> from rankereval.stats import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm")
    array([0.03, 0.06, 0.06])
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh")
    array([0.03, 0.04, 0.04])
    """
    method = _choice(method, CORRECTIONS, "correction", _CORRECTION_ALIASES)
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    ok = ~np.isnan(p)
    if ((p[ok] < 0) | (p[ok] > 1)).any():
        raise ValueError("pvalues must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    if method == "none":
        adj = q.copy()
    elif method == "bonferroni":
        adj = np.minimum(q * m, 1.0)
    else:
        order = np.argsort(q, kind="stable")
        ranked = q[order]
        if method == "holm":
            stepped = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
        else:  # Benjamini-Hochberg
            stepped = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = np.minimum(stepped, 1.0)
    out[ok] = adj
    return out
