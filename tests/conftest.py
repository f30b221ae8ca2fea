"""Test configuration: Hypothesis runs a fixed set of examples under CI (CI=true), so a landing
does not depend on luck; locally it explores new examples every run."""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Debug mode (rules/debug.py) checks every rule call of the whole suite: a rule that drops a
# derivative or breaks the tangent model fails the test that reached it.
import yuebing  # noqa: E402

yuebing.config(debug=True)
