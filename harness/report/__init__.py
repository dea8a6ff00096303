"""The report of a run and the results it is rendered from: ``results`` (the results.json
format, read and written whole), ``render`` (report.md, report.html, videos, plots) and
``metrics`` (how far an output is from its reference)."""
