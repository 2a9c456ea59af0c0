"""The REST API's browsable HTML, under a Content-Security-Policy it can work with."""

from rest_framework.renderers import BrowsableAPIRenderer


class CSPBrowsableAPIRenderer(BrowsableAPIRenderer):
    """DRF's browsable pages (staff only) carry a <style> block for highlighted docstrings, and
    their jQuery/Bootstrap scripts set style attributes: allow inline styles there, and only
    there. Scripts stay 'self' only, as on every page (docs/deployment.md#security)."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None:
            response._csp_replace = {"style-src": ["'self'", "'unsafe-inline'"]}
        return super().render(data, accepted_media_type, renderer_context)
