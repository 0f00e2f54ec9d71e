"""Markdown an organiser wrote (a competition's description and rules of conduct), rendered safely.

``markdown-it-py`` in its CommonMark preset with raw HTML **off**: a ``<script>`` or any other tag
in the text is escaped and shown as text, never passed through. Its link check refuses
``javascript:``, ``vbscript:``, ``file:`` and ``data:`` addresses (but images' ``data:image/...``);
such a link stays text. The result is :class:`markupsafe.Markup` so Jinja2's autoescaping
does not escape it twice; everything in it came out of the renderer's own escaping.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


@lru_cache(maxsize=256)
def render(text: str) -> Markup:
    """The HTML of ``text`` (CommonMark, raw HTML escaped), rendered once per text and process: some
    texts within the length bound take the renderer about a second (20,000 characters of ``![``), and a
    page is viewed again and again."""
    return Markup(_MD.render(text))  # the renderer escaped every raw tag (html=False)
