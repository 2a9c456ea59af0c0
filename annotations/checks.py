"""System checks of the annotations app (``manage.py check --database default``, and every
``migrate``): stored data that a page cannot show. See docs/annotation.md#study-addresses."""

from django.core.checks import Tags, Warning, register
from django.db import DatabaseError

from annotations.common.study_address import study_address_problem, study_rename_command


@register(Tags.database)
def study_addresses_check(app_configs=None, databases=None, **kwargs):
    """A warning naming every study stored under an address that fails the study-address rule
    (made before the rule, or written past the app): its pages cannot be linked to."""
    from annotations.models import Study

    warnings = []
    for alias in databases or ():
        try:
            slugs = list(Study.objects.using(alias).values_list("slug", flat=True))
        except DatabaseError:  # not migrated yet: nothing stored to check
            continue
        for slug in slugs:
            problem = study_address_problem(slug)
            if problem is not None:
                warnings.append(
                    Warning(
                        f"{problem}; no study page can be opened or linked to at it",
                        hint=f"rename it: {study_rename_command(slug)}",
                        obj=f"study {slug!r}",
                        id="annotations.W001",
                    )
                )
    return warnings
