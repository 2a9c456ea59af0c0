"""Recruitment without passwords: consent, invite links and panel (Prolific-style) study links.

- ``rules``: the rules as plain functions, no Django (tokens, link states, panel parameters,
  which items a recruit gets);
- ``consent``, ``enrolment``, ``invites``, ``panels``: the writes, one transaction each;
- ``selectors``: what the staff page reads;
- ``models`` (migration annotations/0006_recruitment); ``views`` (people arriving by link, and
  the consent gate the survey calls), ``staff_views``, ``urls``, ``forms``, ``admin``.

See docs/annotation.md#recruitment-without-passwords.
"""
