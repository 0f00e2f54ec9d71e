"""Pages of the repository's own documentation on the site: the rules pages, the bot guide, the API reference.

Routes (docs/web.md, "The site as the front door"): ``/rules`` and ``/rules/{game}`` (docs/rules/*.md, each
with links to the game's latest finished replays), ``/docs/bots`` (docs/bots.md), ``/docs/write-a-bot``
(docs/howto/write-a-bot.md) and ``/docs/api`` (Swagger UI over ``/openapi.json``, its scripts and style
sheet served from the ``fastapi-offline`` package under ``/static/swagger-ui/``: no CDN).

The Markdown comes from the installed package: ``web/sitedocs`` is a link to ``docs/``, and
pyproject.toml's package data copies the served pages into a wheel, so an editable install reads ``docs/``
itself and a normal install its copies; nothing is read relative to the working directory.

Rendering: markdown-it-py (CommonMark and tables, raw HTML off as in web/markdown.py). Headings get the
ids MkDocs gives them (its ``toc`` slugs), so ``bots.md#2-the-clock-and-the-verdicts`` lands where it
does on the documentation site. A link to another served page becomes that page's address; a link to
a page the site does not serve (docs/architecture.md, ...) is shown as its text, and so is an image, so
no link on these pages leads nowhere.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from ladder import read as q
from web.deps import Pool

__all__ = ["DOCS_DIR", "GUIDES", "RULES", "SWAGGER_STATIC", "DocPage", "doc_page", "router", "swagger_static"]

DOCS_DIR = Path(__file__).resolve().parent / "sitedocs"
"""The served pages of docs/ inside the package (a link to docs/ in the repository, copies in a wheel)."""


@dataclass(frozen=True, slots=True)
class RulesPage:
    """A game's rules page: its address's last part, the registry's name and the docs file."""

    slug: str
    game: str
    title: str
    source: str


RULES: tuple[RulesPage, ...] = (
    RulesPage("floriferous", "floriferous", "Floriferous", "rules/floriferous.md"),
    RulesPage("la-fleur", "lafleur", "La Fleur", "rules/la-fleur.md"),
    RulesPage("flowar", "flowar", "Flowar", "rules/flowar.md"),
)
"""The rules pages: ``/rules/{slug}`` renders ``docs/{source}``; ``/rules/{game}`` redirects to the slug."""

GUIDES: dict[str, str] = {"bots": "bots.md", "write-a-bot": "howto/write-a-bot.md"}
"""The bot guide's pages: ``/docs/{name}`` renders ``docs/{file}``."""

SITE_URLS: dict[str, str] = {
    **{r.source: f"/rules/{r.slug}" for r in RULES},
    **{source: f"/docs/{name}" for name, source in GUIDES.items()},
}
"""Each served docs file (relative to docs/) and its address on the site: what a link between them becomes."""

EXAMPLE_REPLAYS = 5
"""Finished matches linked from a rules page."""

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
_EXTERNAL = re.compile(r"^(https?|mailto):", re.IGNORECASE)


def slugify(text: str, seen: dict[str, int]) -> str:
    """A heading's id as MkDocs' ``toc`` makes it: ASCII, word characters, spaces and hyphens kept, lower
    case, runs of spaces and hyphens as one hyphen; a repeated id gets ``_1``, ``_2``, ...."""
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    slug = re.sub(r"[-\s]+", "-", value)
    n = seen.get(slug, 0)
    seen[slug] = n + 1
    return slug if n == 0 else f"{slug}_{n}"


def _plain(inline: Token) -> str:
    """The text of an inline token as read: its text and code spans, without markup."""
    return "".join(c.content for c in inline.children or () if c.type in ("text", "code_inline"))


def _site_href(href: str, source: str) -> str | None:
    """Where a link in ``source`` (a path under docs/) points on the site, or None (shown as text)."""
    if href.startswith("#"):
        return href
    if _EXTERNAL.match(href):
        return href
    if ":" in href.split("/", 1)[0] or href.startswith("/"):
        return None  # another scheme, or an address on the documentation site's own root
    path, _, fragment = href.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    url = SITE_URLS.get(target)
    if url is None:
        return None
    return url + (f"#{fragment}" if fragment else "")


def _rewrite_inline(children: list[Token], source: str) -> list[Token]:
    """Links rewritten to the site's addresses or unwrapped to their text; images as their alt text."""
    out: list[Token] = []
    dropped: list[bool] = []  # per open link: whether it was unwrapped
    for tok in children:
        if tok.type == "link_open":
            href = _site_href(str(tok.attrGet("href") or ""), source)
            dropped.append(href is None)
            if href is None:
                continue
            tok.attrSet("href", href)
        elif tok.type == "link_close":
            if dropped.pop():
                continue
        elif tok.type == "image":
            alt = Token("text", "", 0)
            alt.content = "".join(c.content for c in tok.children or ()) or str(tok.attrGet("alt") or "")
            out.append(alt)
            continue
        out.append(tok)
    return out


@dataclass(frozen=True, slots=True)
class DocPage:
    """A docs file rendered for the site.

    Attributes:
        title: the text of its first level-1 heading (the file's name without one); the page shows it
            as its own ``<h1>`` (id ``title_id``), above the example replays and the table of contents.
        title_id: that heading's id.
        html: the rest of the file (escaped by the renderer: raw HTML in the file is text).
        toc: ``(id, text)`` of each level-2 heading, in order.
    """

    title: str
    title_id: str
    html: Markup
    toc: tuple[tuple[str, str], ...]


@lru_cache(maxsize=16)
def doc_page(source: str) -> DocPage:
    """``docs/{source}`` rendered (once per process: the installed files do not change).

    Raises:
        FileNotFoundError: the package holds no such page (a broken install).
    """
    text = (DOCS_DIR / source).read_text(encoding="utf-8")
    env: dict[str, Any] = {}
    tokens = _MD.parse(text, env)
    seen: dict[str, int] = {}
    title, title_id, title_at = "", "", -1
    toc: list[tuple[str, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            inline = tokens[i + 1]
            words = _plain(inline)
            ident = slugify(words, seen)
            tok.attrSet("id", ident)
            if tok.tag == "h1" and title_at < 0:
                title, title_id, title_at = words, ident, i
            elif tok.tag == "h2":
                toc.append((ident, words))
        if tok.type == "inline" and tok.children:
            tok.children = _rewrite_inline(tok.children, source)
    if title_at >= 0:
        del tokens[title_at:title_at + 3]  # heading_open, inline, heading_close: the template shows the title
    html = _MD.renderer.render(tokens, _MD.options, env)
    return DocPage(title=title or source, title_id=title_id or "top", html=Markup(html),  # escaped by the renderer
                   toc=tuple(toc))


def _render(request: Request, template: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    from web.pages import render

    return render(request, template, context, status_code)


router = APIRouter(include_in_schema=False)


@router.get("/rules", response_class=HTMLResponse)
def rules_index(request: Request) -> HTMLResponse:
    pages = [(r, doc_page(r.source)) for r in RULES]
    return _render(request, "rules_index.html", {"pages": pages})


@router.get("/rules/{game}", response_class=HTMLResponse)
def rules(request: Request, pool: Pool, game: str) -> Response:
    by_slug = {r.slug: r for r in RULES}
    page = by_slug.get(game)
    if page is None:
        alias = next((r for r in RULES if r.game == game), None)
        if alias is not None:  # the registry's name (/rules/lafleur): the page's own address
            return RedirectResponse(f"/rules/{alias.slug}", status_code=308)
        known = ", ".join(r.slug for r in RULES)
        raise HTTPException(404, f"no rules page for the game {game!r}; the rules pages are: {known}")
    replays = q.example_replays(pool, page.game, EXAMPLE_REPLAYS)
    return _render(request, "doc.html", {"page": doc_page(page.source), "rules": page, "replays": replays,
                                         "source": page.source})


@router.get("/docs/api", response_class=HTMLResponse)
def api_reference(request: Request) -> HTMLResponse:
    return _render(request, "api_docs.html", {"openapi_url": request.app.openapi_url or "/openapi.json"})


@router.get("/docs/{name}", response_class=HTMLResponse)
def guide(request: Request, name: str) -> HTMLResponse:
    source = GUIDES.get(name)
    if source is None:
        known = ", ".join(f"/docs/{n}" for n in [*GUIDES, "api"])
        raise HTTPException(404, f"no documentation page {name!r}; the pages are: {known}")
    return _render(request, "doc.html", {"page": doc_page(source), "rules": None, "replays": [],
                                         "source": source})


def swagger_static() -> Path:
    """The folder of Swagger UI's script and style sheet in the ``fastapi-offline`` package."""
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"


SWAGGER_STATIC = "/static/swagger-ui"
"""Where :func:`swagger_static` is mounted (before ``/static``)."""
