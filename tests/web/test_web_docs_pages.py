"""The site as the front door: the rules pages, the bot guide and the API reference (web/site_docs.py).

Oracles that are not the renderer: the docs files themselves, read here and split into headings by a
line scan (not markdown-it); the site's own routes (every link on the pages is requested, every
``#fragment`` looked up among the target page's ids); the replay download (a match is an example
replay only if its replay is served); a wheel built from the repository (the pages are in it and the
site reads them from an unpacked copy, away from the repository); ``parterre``'s own argument parser
(the connect command on the owner's bot page parses to the configured address and the token).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Iterator
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fixtures.web_helpers import Site, shared_site

from ladder import make_pool
from web import create_app
from web.site_docs import RULES

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]

DOC_PAGES = {"/rules/floriferous": "rules/floriferous.md", "/rules/la-fleur": "rules/la-fleur.md",
             "/rules/flowar": "rules/flowar.md", "/docs/bots": "bots.md", "/docs/write-a-bot": "howto/write-a-bot.md"}
PAGES = ["/rules", *DOC_PAGES, "/docs/api"]


@pytest.fixture(scope="module")
def web_db(pg_admin_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Site]]:
    site = shared_site(pg_admin_url, request.config)
    pool = make_pool(site.database_url, max_size=4)
    try:
        yield pool, site
    finally:
        pool.close()


@pytest.fixture(scope="module")
def client(web_db: tuple[Any, Site]) -> Iterator[TestClient]:
    with TestClient(create_app(pool=web_db[0])) as c:  # no session: an anonymous visitor
        yield c


class _Page(HTMLParser):
    """Links, ids, headings (the page's title and those inside the article) and asset addresses of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.assets: list[str] = []
        self.headings: list[str] = []
        self._heading: list[str] | None = None
        self._in_article = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag in ("script", "img", "iframe") and a.get("src"):
            self.assets.append(a["src"])
        if tag == "link" and a.get("href"):
            self.assets.append(a["href"])
        if tag == "article":
            self._in_article += 1
        if (self._in_article and re.fullmatch(r"h[1-6]", tag)) or tag == "h1":
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._in_article -= 1
        if self._heading is not None and re.fullmatch(r"h[1-6]", tag):
            self.headings.append(" ".join("".join(self._heading).split()))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading.append(data)


def parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    return p


def doc_headings(text: str) -> list[str]:
    """The ATX headings of a Markdown file outside fenced code, as read (no backticks, emphasis or escapes)."""
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * 3
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is not None or line.startswith("    "):
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))  # a link in a heading: its text
            words = words.replace("`", "").replace("**", "").replace("\\", "")
            out.append(" ".join(words.split()))
    return out


@pytest.mark.parametrize("path", list(DOC_PAGES))
def test_each_docs_page_shows_every_heading_of_its_file(client: TestClient, path: str) -> None:
    text = (ROOT / "docs" / DOC_PAGES[path]).read_text(encoding="utf-8")
    r = client.get(path)
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    page = parse(r.text)
    expected = doc_headings(text)
    assert expected and expected[0], expected
    assert [unescape(h) for h in page.headings] == expected
    assert f"<title>{expected[0]}" in unescape(r.text)


def test_every_link_on_the_pages_answers_and_every_fragment_exists(client: TestClient) -> None:
    ids: dict[str, set[str]] = {}
    links: set[tuple[str, str]] = set()
    for path in PAGES:
        r = client.get(path)
        assert r.status_code == 200, path
        page = parse(r.text)
        ids[path] = page.ids
        for href in page.links:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc, f"{path} links away: {href}"
            links.add((parts.path or path, parts.fragment))
    rewritten = {(p, f) for p, f in links if p in DOC_PAGES and f}
    assert ("/docs/bots", "1-the-message-flow") in rewritten  # write-a-bot.md's ../bots.md#1-the-message-flow
    for target, fragment in sorted(links):
        if target not in ids:
            r = client.get(target)
            assert r.status_code == 200, (target, r.status_code)
            ids[target] = parse(r.text).ids
        if fragment:
            assert fragment in ids[target], f"{target}#{fragment}: no such id on the page"


def test_links_to_docs_the_site_does_not_serve_are_text(client: TestClient) -> None:
    # docs/howto/write-a-bot.md links pages the site does not serve (hosted.md, tutorial.md, ...): their words stay
    source = (ROOT / "docs" / "howto" / "write-a-bot.md").read_text(encoding="utf-8")
    links = re.findall(r"\[([^\]]+)\]\((?!https?:)([^)#]*\.md)[^)]*\)", source)
    served = {Path(p).name for p in DOC_PAGES.values()}
    text_only = [(words, target) for words, target in links if Path(target).name not in served]
    assert text_only, links
    html = client.get("/docs/write-a-bot").text
    article = html.split("<article")[1].split("</article>")[0]
    for words, target in text_only:
        assert f'href="{target}' not in html
        assert words.replace("`", "") in unescape(re.sub(r"<[^>]+>", "", article))
    assert ".md" not in " ".join(parse(html).links)


def test_no_page_loads_anything_from_another_host(client: TestClient) -> None:
    for path in ["/", *PAGES]:
        page = parse(client.get(path).text)
        assert page.assets, path
        for url in page.assets:
            parts = urlsplit(url)
            assert not parts.scheme and not parts.netloc and url.startswith("/"), f"{path} loads {url}"
            assert client.get(url).status_code == 200, url
    api = client.get("/docs/api").text
    assert "/static/swagger-ui/swagger-ui-bundle.js" in api and "/static/swagger-ui/swagger-ui.css" in api
    js = client.get("/static/swagger-ui/swagger-ui-bundle.js")
    assert "javascript" in js.headers["content-type"] and len(js.content) > 500_000 and b"SwaggerUIBundle" in js.content


def test_the_navigation_opens_rules_guide_and_api(client: TestClient) -> None:
    header = client.get("/").text.split("</header>")[0]
    for href in ('href="/rules"', 'href="/docs/bots"', 'href="/docs/api"'):
        assert href in header
    assert 'href="/openapi.json">API<' not in header


def test_unknown_pages_are_404_with_the_known_ones_named(client: TestClient) -> None:
    r = client.get("/rules/chess")
    assert r.status_code == 404 and "text/html" in r.headers["content-type"]
    assert "no rules page for the game" in unescape(r.text) and "la-fleur" in r.text and "flowar" in r.text
    r = client.get("/docs/nothing-here")
    assert r.status_code == 404 and "/docs/bots" in r.text
    r = client.get("/rules/lafleur", follow_redirects=False)  # the registry's name of La Fleur
    assert r.status_code == 308 and r.headers["location"] == "/rules/la-fleur"
    for path in PAGES:  # read-only, as every public page
        assert client.post(path).status_code == 405


def _watchable_by_game(client: TestClient, pool: Any) -> dict[str, list[int]]:
    """Finished matches, newest first, whose replay the site serves (the download answers and the match is
    not held), by game."""
    with pool.connection() as conn:
        finished = conn.execute("SELECT id, game FROM matches WHERE status = 'finished' "
                                "ORDER BY finished_at DESC, id DESC").fetchall()
    by_game: dict[str, list[int]] = {}
    for mid, game in finished:
        if client.get(f"/api/matches/{mid}/replay").status_code == 200 and not client.get(
                f"/api/matches/{mid}").json()["held"]:
            by_game.setdefault(game, []).append(mid)
    return by_game


def _example_replays(client: TestClient, slug: str) -> tuple[list[int], str]:
    page = client.get(f"/rules/{slug}").text
    section = page.split('id="example-replays"')[1].split("</section>")[0]
    return [int(m) for m in re.findall(r'href="/matches/(\d+)"', section)], section


def test_a_rules_page_links_the_latest_finished_replays_of_its_game(client: TestClient, web_db: Any) -> None:
    pool, _site = web_db
    by_game = _watchable_by_game(client, pool)
    assert len(by_game.get("floriferous", [])) > 5
    for rules in RULES:
        shown, section = _example_replays(client, rules.slug)
        assert shown == by_game.get(rules.game, [])[:5], rules.game
        if not shown:
            assert "No finished" in section


def test_a_held_match_is_no_example_replay(client: TestClient, web_db: Any) -> None:
    """The newest example's deal planned again (a seat rotation still to play): its replay is held, so
    the rules page skips it (S-20), and shows it again once the twin is gone."""
    from ladder.tournaments import plan_match

    pool, _site = web_db
    before, _ = _example_replays(client, "floriferous")
    newest = before[0]
    with pool.connection() as conn:
        game_string, seed = conn.execute("SELECT game_string, seed FROM matches WHERE id = %s", (newest,)).fetchone()
        bots = [b for (b,) in conn.execute("SELECT bot_id FROM seats WHERE match_id = %s ORDER BY seat", (newest,))]
    twin = plan_match(pool, game_string=game_string, bot_ids=bots[::-1], plan_key="docs:held-twin", seed=seed)
    try:
        assert client.get(f"/api/matches/{newest}").json()["held"] is True  # the site's own test of S-20
        shown, _ = _example_replays(client, "floriferous")
        assert newest not in shown
        assert shown == _watchable_by_game(client, pool)["floriferous"][:5]
    finally:
        with pool.connection() as conn:
            conn.execute("DELETE FROM seats WHERE match_id = %s", (twin,))
            conn.execute("DELETE FROM matches WHERE id = %s", (twin,))
    assert _example_replays(client, "floriferous")[0] == before


def test_the_pages_come_from_the_installed_package(tmp_path: Path) -> None:
    """A wheel built from the repository holds the served pages and fastapi-offline as a dependency; the
    site reads the pages from the unpacked wheel, run from another folder."""
    src = tmp_path / "src"
    skip = shutil.ignore_patterns("node_modules", "build", "__pycache__", "*.egg-info", "*.so", "site")
    for name in ("games", "proto", "referee", "workers", "ladder", "web", "bots", "parterre", "docs"):
        shutil.copytree(ROOT / name, src / name, ignore=skip, symlinks=True)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path / "wheel"
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                          "-w", str(out), str(src)], capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stdout + run.stderr
    (wheel,) = out.glob("parterre-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = next(zf.read(n).decode() for n in names if n.endswith("/METADATA"))
        zf.extractall(tmp_path / "site")
    for source in DOC_PAGES.values():
        assert f"web/sitedocs/{source}" in names
    assert re.search(r"^Requires-Dist: fastapi-offline==", metadata, re.MULTILINE)
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path / 'site')!r})\n"
        "import web.site_docs as d\n"
        f"assert str(d.DOCS_DIR).startswith({str(tmp_path / 'site')!r}), d.DOCS_DIR\n"
        "print(d.doc_page('rules/la-fleur.md').title)\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=elsewhere, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "PARTERRE_ENGINES": "pure"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == doc_headings((ROOT / "docs/rules/la-fleur.md").read_text(encoding="utf-8"))[0]


# -- the owner's bot page: referee address and connect command ------------------------------------------------


def test_the_bot_page_shows_the_referee_and_a_connect_command_that_parses(ladder_db: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from test_participants import account, login, new_bot

    from parterre.cli import build_parser
    from web.auth import ParticipantConfig

    monkeypatch.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    pool = make_pool(ladder_db, max_size=4)
    try:
        app = create_app(pool=pool)
        app.state.participants = ParticipantConfig(signup="open", public_referee="play.parterre.test:443")
        client = TestClient(app, client=("203.0.113.9", 50000))
        name, tok = account(client, "front-door-owner")
        bot = new_bot(client, tok, "front-door-bot")
        login(client, name)

        def command(html: str, ident: str) -> str:
            return unescape(html.split(f'id="{ident}">')[1].split("</pre>")[0])

        page = client.get(f"/my/bots/{bot['id']}").text
        assert 'id="referee-address">play.parterre.test:443<' in page
        args = build_parser().parse_args(shlex.split(command(page, "connect-command"))[1:])
        assert args.command == "connect" and args.address == "play.parterre.test:443"
        assert args.token == "$PARTERRE_BOT_TOKEN"  # the shell expands it: the token is never shown again

        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None
        r = client.post(f"/my/bots/{bot['id']}/token", data={"csrf": csrf.group(1), "confirm": "rotate"})
        assert r.status_code == 200
        new_token = unescape(r.text.split('id="bot-token">')[1].split("</pre>")[0])
        args = build_parser().parse_args(shlex.split(command(r.text, "connect-command"))[1:])
        assert (args.address, args.token) == ("play.parterre.test:443", new_token)
        assert f'MyBot().run("play.parterre.test:443", token="{new_token}")' in unescape(r.text)

        other = TestClient(app, client=("203.0.113.10", 50000))  # anonymous: the owner's page is not shown
        r = other.get(f"/my/bots/{bot['id']}", follow_redirects=False)
        assert r.status_code in (303, 401) and "play.parterre.test" not in r.text
    finally:
        pool.close()


def test_public_referee_setting_is_checked() -> None:
    from web.settings import SettingsError, settings

    assert settings({}).public_referee == "127.0.0.1:50051"
    assert settings({"PARTERRE_PUBLIC_REFEREE": " play.example.org:50051 "}).public_referee == "play.example.org:50051"
    for bad in ("play.example.org", ":50051", "host:0", "host:65536", "host:port", "a b:1"):
        with pytest.raises(SettingsError, match="PARTERRE_PUBLIC_REFEREE"):
            settings({"PARTERRE_PUBLIC_REFEREE": bad})
