"""Adjudication of disputed items (docs/annotation.md).

- ``disputes``: who may adjudicate, the queue of disputed items, one item's evidence, decisions;
- ``views``, ``urls``: the adjudicator's pages.
"""
