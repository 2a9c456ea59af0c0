"""A study's guidelines with example images for each answer (docs/annotation.md#guidelines-with-examples).

- ``examples``: writes (``label_example_set``, ``label_example_remove``) and reads
  (``label_examples_by_answer``) of the example items staff attach to each answer;
- ``forms``, ``views`` (the annotator's guidelines page), ``staff_views`` (attach and remove
  examples), ``urls``.
"""
