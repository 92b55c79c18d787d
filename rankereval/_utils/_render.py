"""Plain-text rendering shared by the command line and the result objects' ``repr``."""
import math


def fmt(x, digits=4):
    """A number for a table: fixed digits, ``nan`` and ``inf`` spelt out."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def json_number(x):
    """A number for strict JSON: NaN -> null, infinities as strings."""
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def csv_number(x):
    """A number for CSV: the shortest round-trip repr, ``nan``/``inf`` spelt out."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def table(header, rows, foot=()):
    """Columns aligned (first left, others right), a rule under the header and above ``foot``."""
    widths = [max(len(str(r[i])) for r in [header, *rows, *foot]) for i in range(len(header))]

    def line(r):
        cells = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        return "  ".join(cells).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    if foot:
        out.append("  ".join("-" * w for w in widths))
        out += [line(r) for r in foot]
    return "\n".join(out) + "\n"


def html_table(header, rows, caption=None, left=1):
    """A plain HTML table (no script, no style sheet; for ``_repr_html_`` in notebooks).

    ``header`` and ``caption`` are text (escaped here); the cells of ``rows`` are HTML
    already (escape text with :func:`html.escape` first). The first ``left`` columns are
    left-aligned, the others right-aligned, as in :func:`table`.
    """
    import html

    def cell(tag, content, i):
        align = "left" if i < left else "right"
        return f'<{tag} style="text-align: {align}">{content}</{tag}>'

    out = ['<table class="rankereval">']
    if caption is not None:
        out.append(f'<caption style="caption-side: top; text-align: left">{html.escape(caption)}</caption>')
    out.append("<thead><tr>" + "".join(cell("th", html.escape(h), i) for i, h in enumerate(header))
               + "</tr></thead>")
    out.append("<tbody>")
    out += ["<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>" for r in rows]
    out.append("</tbody></table>")
    return "\n".join(out)


def latex_escape(text):
    """``text`` with LaTeX's special characters escaped (for tables' cells and captions)."""
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
             "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
             "^": r"\textasciicircum{}"}
    return "".join(table.get(ch, ch) for ch in str(text))


def markdown_escape(text):
    """``text`` safe in a Markdown table cell."""
    return str(text).replace("|", r"\|")
