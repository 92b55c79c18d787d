"""What the readers return: :class:`TrecData`, its :class:`ReadReport`, and
:class:`TrecFormatError`."""
from dataclasses import dataclass, field



class TrecFormatError(ValueError):
    """A TREC qrels or run file is malformed.

    Attributes
    ----------
    path : str
        The file, as it was given.
    line : int or None
        1-based line number of the first offending line (None when the problem is not tied
        to a line, e.g. a broken gzip stream).
    reason : str
        What is wrong.
    """

    def __init__(self, path, line, reason):
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class ReadReport:
    """What a reader found and did, in counts (and the ids of queries it set aside).

    Attributes
    ----------
    qrels_source, run_source : str
        The files read (``"labels DataFrame"``/``"run DataFrame"`` for DataFrames).
    n_judgements, n_run_lines : int
        Judgement lines (rows) and run lines (rows) read.
    n_queries : int
        Rows of the result (queries evaluated).
    n_qrels_queries, n_run_queries : int
        Distinct queries in the qrels and in the run.
    missing_queries : tuple
        Queries of the qrels that are not in the run, in row order.
    missing : str
        What was done with them: ``"drop"`` or ``"empty"`` (evaluated with an empty ranking).
    extra_queries : tuple
        Queries of the run that have no judgements.
    extra : str
        What was done with them: ``"drop"`` or ``"keep"`` (rows with empty labels).
    n_dropped_run_lines : int
        Run lines of dropped queries.
    n_queries_without_relevant : int
        Rows with no document graded ``>= relevance_level``: binary metrics are NaN there.
    n_negative_labels : int
        Judgements with a negative grade (relevant to no metric; grade 0 for DCG/NDCG).
    n_tied_lines : int
        Run lines whose score ties another line of the same query (ordered by ``tie_break``).
    relevance_level : float
    tie_break : str
    order_by : str
    n_comment_lines : tuple of int
        ``#`` comment lines skipped in the qrels and in the run (as trec_eval 10).
    n_extra_field_lines : int
        Run lines with fields after the sixth, which are ignored (as trec_eval).
    depth : int or None
        At most this many documents of each ranking were kept (``trec_eval -M``).
    n_truncated_queries : int
        Rankings that ``depth`` shortened.
    """

    qrels_source: str
    run_source: str
    n_judgements: int
    n_run_lines: int
    n_queries: int
    n_qrels_queries: int
    n_run_queries: int
    missing_queries: tuple
    missing: str
    extra_queries: tuple
    extra: str
    n_dropped_run_lines: int
    n_queries_without_relevant: int
    n_negative_labels: int
    n_tied_lines: int
    relevance_level: float
    tie_break: str
    order_by: str
    n_comment_lines: tuple = (0, 0)
    n_extra_field_lines: int = 0
    depth: object = None
    n_truncated_queries: int = 0

    def notes(self):
        """Human-readable notes on everything a user may want to know (list of str)."""
        out = []

        def some(ids):
            shown = ", ".join(str(q) for q in ids[:5])
            return shown + (f", ... ({len(ids) - 5} more)" if len(ids) > 5 else "")

        if self.missing_queries:
            n = len(self.missing_queries)
            what = ("dropped, as trec_eval does (missing='empty' / -c evaluates them with an empty "
                    "ranking)" if self.missing == "drop" else "evaluated with an empty ranking")
            out.append(f"{n} {_queries(n)} of the qrels not in the run {_were(n)} {what}: "
                       f"{some(self.missing_queries)}")
        if self.extra_queries:
            n = len(self.extra_queries)
            what = ("dropped, as trec_eval does" if self.extra == "drop"
                    else "kept with empty labels (their metrics are NaN)")
            out.append(f"{n} {_queries(n)} of the run without judgements {_were(n)} {what}: "
                       f"{some(self.extra_queries)}")
        if self.n_queries_without_relevant:
            n = self.n_queries_without_relevant
            out.append(f"{n} of {self.n_queries} {_queries(self.n_queries)} {_have(n)} no document with "
                       f"relevance >= {_num(self.relevance_level)}: binary metrics are undefined "
                       "there (NaN; nan_handling says what a mean does with them)")
        for n, what in zip(self.n_comment_lines, ("qrels", "run")):
            if n:
                out.append(f"{n} comment {_lines(n)} ('#') of the {what} {_were(n)} skipped")
        if self.n_extra_field_lines:
            n = self.n_extra_field_lines
            out.append(f"{n} run {_lines(n)} with more than 6 fields: the fields after the sixth "
                       "were ignored, as trec_eval does")
        if self.n_truncated_queries:
            n = self.n_truncated_queries
            out.append(f"{n} {_queries(n)} ranked more than {self.depth} documents: only the first "
                       f"{self.depth} were evaluated (depth, trec_eval -M)")
        if self.n_negative_labels:
            out.append(f"{self.n_negative_labels} negative relevance grades count as 0 for graded metrics")
        return out

    def summary(self):
        """One paragraph: what was read and the notes."""
        head = (f"{self.n_queries} {_queries(self.n_queries)} evaluated (qrels {self.qrels_source}: "
                f"{self.n_qrels_queries} {_queries(self.n_qrels_queries)}, {self.n_judgements} judgements; "
                f"run {self.run_source}: {self.n_run_queries} {_queries(self.n_run_queries)}, "
                f"{self.n_run_lines} lines)")
        return "\n".join([head] + self.notes())


def _queries(n):
    return "query" if n == 1 else "queries"


def _lines(n):
    return "line" if n == 1 else "lines"


def _were(n):
    return "was" if n == 1 else "were"


def _have(n):
    return "has" if n == 1 else "have"


def _num(x):
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True, repr=False, eq=False)
class TrecData:
    """Labels and rankings read together, with the id maps and a report.

    Row ``i`` of :attr:`binary_labels`, :attr:`numeric_labels` and :attr:`rankings` belongs
    to query ``query_ids[i]``; item id ``j`` is document ``doc_ids[j]`` in all three.

    Attributes
    ----------
    binary_labels : BinaryLabels
        Relevant = grade ``>= relevance_level``. For Precision, Recall, AP, ... .
    numeric_labels : NumericLabels
        The grades (negative grades as 0). For DCG and NDCG.
    rankings : Rankings
        One ranking per query, best document first.
    query_ids : pandas.Index
        Query id of each row (``query_ids.get_loc(q)`` finds the row of query ``q``).
    doc_ids : pandas.Index
        Document id of each item id (``doc_ids.get_indexer(ids)`` maps ids to item ids).
    report : ReadReport
        Counts of what was read, dropped, kept, clipped and tied.
    """

    binary_labels: object
    numeric_labels: object
    rankings: object
    query_ids: object
    doc_ids: object
    report: ReadReport = field(compare=False)

    @property
    def n_queries(self):
        """Number of rows (queries evaluated)."""
        return len(self.query_ids)

    def labels_for(self, metric):
        """The labels ``metric`` reads: :attr:`numeric_labels` for a metric of graded
        relevance (its registry entry says ``labels="graded"``: DCG, NDCG), else binary."""
        from rankereval.metrics._base import labels_for

        return labels_for(metric, self.binary_labels, self.numeric_labels)

    def score(self, metric, *, ties=None):
        """Per-query scores of ``metric`` (ndarray aligned with :attr:`query_ids`); ``ties``
        as in :meth:`Metric.score <rankereval.Metric.score>` (for runs read with
        ``ties="keep"``)."""
        return metric.score(self.labels_for(metric), self.rankings, ties=ties)

    def mean(self, metric, **kwargs):
        """``metric.mean`` on these labels and rankings; keyword arguments are passed on."""
        return metric.mean(self.labels_for(metric), self.rankings, **kwargs)

    def __repr__(self):
        return (f"TrecData(n_queries={self.n_queries}, n_documents={len(self.doc_ids)}, "
                f"n_judgements={self.report.n_judgements}, n_run_lines={self.report.n_run_lines})")
