"""Ground-truth labels and rankings: validated once, stored in the layout the kernels read.

* :class:`BinaryLabels` and :class:`NumericLabels` hold one label row per query/user as a
  CSR structure (sorted item ids, no explicit zeros). Items that are not stored are not
  relevant (label 0).
* :class:`IntentLabels` are :class:`NumericLabels` (each item's largest grade) that also keep
  each intent's (subtopic's) grades, for the intent-aware diversity measures.
* :class:`Rankings` holds one ranking per query/user as a padded integer array of shape
  ``(n_rankings, max_length)`` (pad value ``-1``) plus the length of each row.

Item ids are non-negative integers. They are stored as ``int32`` while every id fits and as
``int64`` once an id reaches ``2**31``.

The package is split by purpose: ``_checks`` (input checks and their errors),
``_conversion`` (input to stored arrays), ``_labels`` and ``_rankings`` (the classes),
``_groups`` (flat learning-to-rank arrays grouped by query, for ``from_groups``). Its
public names live here: the classes' ``__module__`` is ``rankereval.data``, so that pickles
name ``rankereval.data.BinaryLabels`` (and ``rankereval.data._restore_labels``) as 0.3.0 wrote
them.
"""
from rankereval.data._conversion import _host_array  # noqa: F401  (read by tests/test_topk.py)
from rankereval.data._labels import BinaryLabels, Labels, NumericLabels, _restore_labels
from rankereval.data._intents import IntentLabels, _restore_intent_labels
from rankereval.data._rankings import Rankings, _filter_structure, _restore_rankings  # noqa: F401
from rankereval.exceptions import InvalidValuesWarning

__all__ = ["InvalidValuesWarning", "Labels", "BinaryLabels", "NumericLabels", "IntentLabels", "Rankings"]

for _obj in (Labels, BinaryLabels, NumericLabels, IntentLabels, Rankings, _restore_labels, _restore_intent_labels,
             _restore_rankings):
    _obj.__module__ = __name__  # documented and pickled under the public name
del _obj
