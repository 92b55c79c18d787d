"""Warnings of rankereval (as :mod:`sklearn.exceptions` collects scikit-learn's).

The bottom of the package: it imports nothing of rankereval, so that every layer can import it.
"""

__all__ = ["InvalidValuesWarning", "TiedScoresWarning", "UndefinedMetricWarning"]


class InvalidValuesWarning(UserWarning):
    """Warns about input that is valid but probably not what was meant.

    Raised for empty rankings and for non-finite scores dropped by
    :meth:`Rankings.from_scores <rankereval.Rankings.from_scores>`.
    """


class UndefinedMetricWarning(UserWarning):
    """A mean is NaN because the metric is undefined for some rankings.

    Emitted once per call by :meth:`Metric.mean <rankereval.Metric.mean>`,
    :meth:`Metric.bootstrap <rankereval.Metric.bootstrap>` and :func:`rankereval.evaluate`
    with ``nan_handling='propagate'`` (the default) when some rankings score NaN, e.g. a
    query without any relevant item. The message names the metric, how many rankings are
    undefined and why, and the two other ``nan_handling`` choices. Never emitted by
    :meth:`Metric.score <rankereval.Metric.score>`, whose NaN values are the answer.

    Examples
    --------
    >>> import warnings
    >>> from rankereval import BinaryLabels, Rankings, NDCG, UndefinedMetricWarning
    >>> y_true = BinaryLabels.from_positive_indices([[0], []])
    >>> y_pred = Rankings.from_ranked_indices([[0, 1], [1, 0]])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     NDCG(2).mean(y_true, y_pred)
    nan
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    ndcg@2 is undefined (NaN) for 1 of 2 rankings, because its labels have no item with
    relevance > 0, so its mean is NaN. Pass nan_handling='drop' to average over the defined rankings
    only, or nan_handling='zerofill' to count undefined rankings as 0.
    >>> NDCG(2).mean(y_true, y_pred, nan_handling="drop")
    1.0
    """


class TiedScoresWarning(UserWarning):
    """Ties inside the cutoff could change a metric's mean, and no ``ties=`` mode was chosen.

    Emitted by :func:`rankereval.evaluate` for rankings that keep their ties
    (``Rankings.from_scores(..., ties="keep")``) evaluated with ``ties=None`` (the recorded
    order, equal scores by item id), when the means of the best and the worst orders of the
    tied groups differ by more than 0.001 (relative to the mean, for means above 1): pass
    ``ties="expected"`` for the value of a random order (see :doc:`/guide/ties`).
    """


UndefinedMetricWarning.__module__ = "rankereval"  # documented and pickled under the public name (rankereval/__init__.py)
