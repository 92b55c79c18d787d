"""Read relevance judgements and runs from TREC files, pandas DataFrames, ranx-style dicts of
dicts or ir_datasets / ir_measures records.

The readers turn string (or any hashable) query and document ids into the integer rows and
item ids that :class:`~rankereval.BinaryLabels`, :class:`~rankereval.NumericLabels` and
:class:`~rankereval.Rankings` use, *jointly* for the labels and the run, so that item ``j``
means the same document in both. The id maps come back with the data, so per-query results
can be reported by query id:

>>> from rankereval import NDCG
>>> from rankereval.io import read_trec, sample_paths
>>> qrels_path, run_path = sample_paths()
>>> data = read_trec(qrels_path, run_path)
>>> data
TrecData(n_queries=20, n_documents=..., n_judgements=..., n_run_lines=1000)
>>> scores = data.score(NDCG(10))
>>> scores.shape
(20,)
>>> data.query_ids[0]
'q01'

Conventions (the same as ``trec_eval`` wherever ``trec_eval`` defines one):

* **Files.** Qrels lines are ``query iteration document relevance``, run lines are
  ``query Q0 document rank score tag``. Fields are separated by spaces and/or tabs; blank
  lines are allowed; gzip-compressed files (recognised by their content, not their name)
  are read transparently. Ids are strings and compared as such (``"01"`` and ``"1"`` are
  different queries). The ``iteration``, ``Q0`` and ``tag`` fields are not interpreted.
* **Order of a ranking.** By descending score (``order_by="rank"``: by ascending rank).
  Ties are broken by ``tie_break``: ``"trec_eval"`` (default) compares scores at the 32-bit
  float precision ``trec_eval`` stores them in and puts the larger document id first
  (byte-wise string order), exactly as ``trec_eval`` and ``pytrec_eval`` do; ``"docid"``
  compares scores exactly and puts the smaller document id first; ``"input"`` compares
  scores exactly and keeps the order of the lines in the file (rows in the DataFrame).
* **Rows.** One row per query, ordered by query id (string order, as ``trec_eval``'s
  per-query output; DataFrame ids that cannot be sorted keep their first-appearance order).
  Queries of the qrels that are not in the run are dropped (``missing="drop"``, like
  ``trec_eval``) or evaluated with an empty ranking (``missing="empty"``, like
  ``trec_eval -c``: their metrics are 0, or NaN where a metric is undefined), or refused
  (``missing="error"``). Queries of the run without judgements cannot be scored; they are
  dropped (``extra="drop"``, like ``trec_eval``), kept with empty labels (``extra="keep"``:
  their metrics are NaN) or refused (``extra="error"``). Every choice is counted in
  :attr:`TrecData.report`.
* **Relevance.** Binary metrics see a document as relevant when its grade is at least
  ``relevance_level`` (default 1, ``trec_eval -l``). Graded metrics (:class:`~rankereval.DCG`,
  :class:`~rankereval.NDCG`) use the grades; negative grades (e.g. ``-2`` for spam) count as
  0 because :class:`~rankereval.NumericLabels` holds non-negative grades, and are counted in
  the report.
* **Errors.** A malformed file raises :class:`TrecFormatError` naming the file, the line and
  what is wrong (column count, non-numeric or NaN score/grade, duplicate document for a
  query, invalid UTF-8, broken gzip stream). Nothing is skipped silently.

pandas is needed by this module (``pip install rankereval[io]``); pyarrow, when installed,
parses large files several times faster. Neither is imported by ``import rankereval`` or by
``import rankereval.io``; they are imported when a reader is called. Reading a file larger
than 32 MB shows a tqdm progress bar when stderr is a terminal (``progress=`` overrides).

The module is a package split by job: ``_source`` (bytes, gzip, progress, optional
dependencies), ``_parse`` (columns from bytes), ``_assemble`` (one id space, rows, ranking
order), ``_trec`` (the public readers and TREC's conventions), ``_records`` (dicts and
records, through the DataFrame path) and ``_result`` (what they return).
"""
from rankereval.io._records import from_dicts, from_records
from rankereval.io._result import ReadReport, TrecData, TrecFormatError
from rankereval.io._source import _pandas  # noqa: F401  (used by the result objects)
from rankereval.io._trec import (  # noqa: F401  (the option choices, for the command line)
    EXTRA, MISSING, ORDER_BY, TIE_BREAKS, from_dataframes, read_trec, sample_paths)

__all__ = ["TrecData", "ReadReport", "TrecFormatError", "read_trec", "from_dataframes", "from_dicts", "from_records",
           "sample_paths"]

for _obj in (TrecData, ReadReport, TrecFormatError, read_trec, from_dataframes, from_dicts, from_records, sample_paths):
    _obj.__module__ = __name__  # documented and pickled under the public module
del _obj
