"""A query compiled once per process and run with new values each time.

Compiling a Django query (joins, the qualification gate's two subqueries) costs about twenty
times running it on a warm PostgreSQL connection: 1.9 ms against 0.1 ms for the survey's
"which item is next" query, which runs on every request of the annotator's loop (issue 36 §8,
docs/performance.md "Survey against Label Studio"). ``CompiledQuery`` builds the queryset once
with stand-in values, keeps its SQL, and swaps the real values into the parameters on each call.
Rows come back through the compiler's own converters: as named tuples for a ``values_list``
queryset, as model instances (``select_related`` ones included) for a model queryset, built the
way Django's ``ModelIterable`` builds them.

Only for querysets whose variable parts are parameters (ids, not the shape of the query):
anything that changes the SQL text, such as a slice, is part of the cache key.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable

from django.db import connections
from django.db.models.query import ModelIterable, get_related_populators

# Stand-ins no real id takes (ids are positive), each unique so its place in the parameters
# is unambiguous, and within a 32-bit integer field's range (Django compiles a value outside a
# field's range to an empty result, with no parameter to swap).
_STAND_IN_BASE = -1_987_654_321


class CompiledQuery:
    """``query(**shape, **values)`` → list of named tuples or of model instances.

    ``build(**kwargs)`` returns a ``values_list`` or a model queryset; ``values`` names the keyword
    arguments that only fill parameters (one compiled SQL serves every value); every other
    keyword argument is part of the query's shape and gets its own compiled SQL.
    """

    def __init__(self, build: Callable, *, values: tuple[str, ...], using: str = "default"):
        self._build = build
        self._values = values
        self._using = using
        self._compiled: dict[tuple, tuple] = {}
        self._lock = threading.Lock()

    def __call__(self, **kwargs) -> list:
        connection = connections[self._using]
        shape = tuple(sorted((k, v) for k, v in kwargs.items() if k not in self._values))
        key = (connection.vendor, connection.alias, shape)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key) or self._compile(dict(shape), connection)
                self._compiled[key] = compiled
        sql, params, slots, compiler, converters, make_row = compiled
        params = list(params)
        for index, name in slots:
            params[index] = kwargs[name]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        if converters:
            rows = compiler.apply_converters(rows, converters)
        return [make_row(row) for row in rows]

    def _compile(self, shape: dict, connection) -> tuple:
        stand_ins = {name: _STAND_IN_BASE - index for index, name in enumerate(self._values)}
        queryset = self._build(**shape, **stand_ins)
        compiler = queryset.query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        by_value = {value: name for name, value in stand_ins.items()}
        slots = tuple((i, by_value[p]) for i, p in enumerate(params) if p in by_value)
        missing = set(self._values) - {name for _, name in slots}
        if missing:  # a value folded into the SQL text would be silently ignored
            raise ValueError(f"not a parameter of the compiled query: {sorted(missing)}")
        columns = [column for column, _, _ in compiler.select[: compiler.col_count]]
        converters = compiler.get_converters(columns)
        if queryset._iterable_class is ModelIterable:
            make_row = _instance_maker(queryset, compiler, connection.alias)
        else:
            make_row = _tuple_maker(queryset)
        return sql, tuple(params), slots, compiler, converters, make_row


def _tuple_maker(queryset) -> Callable:
    """row → named tuple of the fields, in the order values_list was given them (the order
    Django selects them in), as NamedValuesListIterable does."""
    query = queryset.query
    names = queryset._fields or [
        *query.extra_select,
        *query.values_select,
        *query.annotation_select,
    ]
    return collections.namedtuple("Row", names)._make


def _instance_maker(queryset, compiler, db: str) -> Callable:
    """row → model instance with its select_related instances, as ModelIterable makes it."""
    if queryset._known_related_objects or compiler.annotation_col_map:
        raise ValueError("a compiled model query takes no annotations or known related objects")
    klass_info, select = compiler.klass_info, compiler.select
    model = klass_info["model"]
    start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
    init_list = [column[0].target.attname for column in select[start:end]]
    populators = get_related_populators(klass_info, select, db)

    def make(row):
        instance = model.from_db(db, init_list, row[start:end])
        for populator in populators:
            populator.populate(row, instance)
        return instance

    return make
