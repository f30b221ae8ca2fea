"""mkdocs hook: the API page documents every name of ``yuebing.__all__``.

``docs/api.md`` groups the public names by hand; a name added to ``__all__`` since (by anyone)
is appended to the page under "Other public names" when the site is built, so the reference
is never missing one. Move it into its group in ``docs/api.md`` when convenient.
"""
from __future__ import annotations

import yuebing


def unlisted(markdown: str) -> list[str]:
    """The names of ``yuebing.__all__`` that no ``::: yuebing.<...>.<name>`` line of ``markdown``
    documents (a full path is needed where a function shares its name with its module, as
    ``yuebing.api.flatten.flatten`` does: ``yuebing.flatten`` would document the module)."""
    listed = {line.split()[1].rsplit(".", 1)[-1] for line in markdown.splitlines() if line.startswith("::: yuebing.")}
    return [name for name in yuebing.__all__ if name not in listed]


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != "api.md":
        return markdown
    names = unlisted(markdown)
    if not names:
        return markdown
    entries = "\n\n".join(f"::: yuebing.{name}" for name in names)
    return f"{markdown}\n\n## Other public names\n\n{entries}\n"
