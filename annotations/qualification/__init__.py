"""The optional qualification round: gold items an annotator must pass before a batch's items.

- ``rules``: the rules as plain functions, no Django (the batch's requirement and its problems,
  an attempt's score and verdict, how many attempts an annotator has);
- ``models`` (migration annotations/0017_qualification): attempts and staff's decisions;
- ``status``: reads (the survey's gate, one annotator's state, the staff pages' rows);
- ``attempts``: writes, one transaction each (start an attempt, finish it on its last answer,
  staff grant another attempt or qualify an annotator);
- ``views`` (the annotator's intro and result page), ``staff_views`` and ``urls``.

See docs/annotation.md#qualification-round.
"""
