"""The read-only REST API (OpenAPI schema at /api/schema/).

- ``views``, ``urls``: the endpoints;
- ``serializers``: the rows they return;
- ``renderers``: the browsable HTML under the site's Content-Security-Policy.
"""
