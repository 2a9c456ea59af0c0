"""Bulk upserts without a model instance per row.

``QuerySet.bulk_create`` builds one model instance per row and prepares every value of every
row through its field (``get_db_prep_save``): tens of microseconds a row, which for a scoring
run is serial Python in the one process that stores every image's result. ``rows_upsert``
takes plain tuples, prepares only what needs it (JSON dumped once per value, one timestamp
for the whole call) and sends one ``executemany`` of the statement ``bulk_create(...,
update_conflicts=True)`` writes (``INSERT … ON CONFLICT (…) DO UPDATE SET f = EXCLUDED.f``,
which SQLite and PostgreSQL share). The stored values are the ORM's (tested on both).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from django.db import connections, models, router
from django.utils import timezone


def rows_upsert(
    model: type[models.Model],
    rows: Iterable[Sequence],
    *,
    fields: Sequence[str],
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
) -> None:
    """Insert ``rows`` (one value per name in ``fields``, as the model would take it: a
    related object's primary key for a foreign key, a dict for a JSON field), or update
    ``update_fields`` where a row with the same ``unique_fields`` exists.

    Fields with ``auto_now``/``auto_now_add`` not in ``fields`` are set to this call's time
    (one value for every row; ``bulk_create`` takes one per row, microseconds apart)."""
    meta = model._meta
    database = router.db_for_write(model)
    connection = connections[database]
    columns = [meta.get_field(name) for name in fields]
    stamped = [
        field
        for field in meta.concrete_fields
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
        if field.name not in fields
    ]
    moment = timezone.now()
    now = tuple(field.get_db_prep_value(moment, connection) for field in stamped)
    json_at = [i for i, field in enumerate(columns) if isinstance(field, models.JSONField)]
    encoders = {i: columns[i].encoder for i in json_at}
    prepared = []
    for row in rows:
        if json_at:
            row = list(row)
            for i in json_at:
                # None is SQL NULL, as the ORM stores it, not the JSON text "null".
                row[i] = None if row[i] is None else json.dumps(row[i], cls=encoders[i])
        prepared.append((*row, *now))
    if not prepared:
        return
    quote = connection.ops.quote_name
    names = [quote(field.column) for field in (*columns, *stamped)]
    unique = [quote(meta.get_field(name).column) for name in unique_fields]
    updates = [quote(meta.get_field(name).column) for name in update_fields]
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(names)}) "
        f"VALUES ({', '.join(['%s'] * len(names))}) "
        f"ON CONFLICT ({', '.join(unique)}) DO UPDATE SET "
        + ", ".join(f"{name} = EXCLUDED.{name}" for name in updates)
    )
    with connection.cursor() as cursor:
        cursor.executemany(sql, prepared)
