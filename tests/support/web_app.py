"""The service's app as the tests compare it: the same app with its fast lane for POST /api/v1/validate taken out,
so that every answer of the lane can be checked against the route's own."""

from __future__ import annotations


def without_lane(settings):
    """The app of `settings` without the FastValidate middleware: the route answers every request itself."""
    from grpo_web.api.fastlane import FastValidate
    from grpo_web.app import create_app

    app = create_app(settings)
    app.user_middleware = [m for m in app.user_middleware if m.cls is not FastValidate]
    return app
