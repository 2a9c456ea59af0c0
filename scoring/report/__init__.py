"""The audit report (docs/report.md): a study's, a REFLECT face set's, or both in one
document, read top to bottom:

- ``dataset``: frames in, the report dict out (``audit_report``); Django-free
- ``text``: the report's sentences (limitations, the Article 10 map); Django-free
- ``display``: display strings and the disparities summary; Django-free
- ``executive_summary``: the executive summary's sentences, from the report dict; Django-free
- ``charts``, ``roc``: matplotlib figures of a metrics document / ROC curves; ``plotting``:
  matplotlib without pyplot's global state; Django-free
- ``figures``: the report's figure list, each figure's rows and image
- ``design``: the design block counted from item and judgment records; Django-free
- ``datasheet``: the people (annotator pool) and the data (prompt-set statement); Django-free
- ``legal``: the obligations that apply to the system kind (``data/obligations.json``) and the
  evidence for each; Django-free
- ``reflect``: the REFLECT part (answers → statistics → part, its sentences, tables, figures);
  Django-free
- ``bundle``: the report from its inputs (``report_from_inputs``), and the report folder's files
  and manifest; ``verify``: recompute a folder, ``python -m scoring.report.verify DIR``; Django-free
- ``selectors``: the study design from the database; ``inputs``: the report's inputs read from
  the database; ``documents``: a study's or a face set's report as the pages serve it (inputs
  -> bundle -> render, cached per state of the data)
- ``report_section``: what a numbered section declares (``ReportSection``), each declared in
  its own module (``legal``, ``study_sections``, ``safety``, ``side_by_side``,
  ``reflect.display``); ``sections``: them in page order, the one list the contents, the
  template context and the figure list read; Django-free
- ``render``: the HTML page context, the self-contained HTML file, the JSON text and the PDF
- ``pdf``: HTML printed to PDF by headless Chromium; Django-free
- ``folder``: a report folder's files (the ``audit_report`` and ``reflect_report`` commands)
- ``views``, ``urls``: the pages; the ``audit_report`` command writes the same files
"""
