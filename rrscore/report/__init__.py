"""``report.html``: one self-contained, interactive page (Bokeh, its JavaScript inline)
of a run's outputs, for a drive, a sweep or a yard; see ``docs/report.md``."""
