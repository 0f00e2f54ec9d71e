"""The JSON API fuzzed against its own OpenAPI description (schemathesis): no server error, responses conform.

Given the app over a database seeded with real matches, schemathesis generates
requests for every ``/api/`` operation from ``/openapi.json`` and checks each
response with its own checks (``call_and_validate``: never a 5xx, status codes,
content types and bodies as described). Generated ids mostly do not exist, so
half of the valid cases get the id of a real game, bot, tournament or match
instead (their query values stay generated); invalid cases (wrong types, out
of range values) are generated too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fixtures.web_helpers import Site, shared_site
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from ladder import make_pool
from web import create_app


@pytest.fixture(scope="module")
def fuzzed(pg_admin_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, dict[str, list[Any]]]]:
    """The API's schema (ASGI, in-process, over the shared seeded database) and the ids that exist."""
    site: Site = shared_site(pg_admin_url, request.config)
    pool = make_pool(site.database_url, max_size=4)
    try:
        known = {
            "competition_id": [_a_competition(pool)],
            "game": ["floriferous", "toy"],
            "bot_id": sorted(site.bots.values()),
            "tournament_id": [site.tournament_id],
            "match_id": [site.four_player, site.solo, site.timeout_match, site.toy, site.unfinished],
            "step": [-1, 0, 5, 40],
            "token_id": [1, 2],  # the participants' routes: refused without a token anyway
            "number": [1, 2],  # hosted versions: likewise
            "kind": ["validation", "regression"], "n": [0, 1],  # a hosted version's games: likewise
        }
        yield schemathesis.openapi.from_asgi("/openapi.json", create_app(pool=pool)), known
    finally:
        pool.close()


def _a_competition(pool: Any) -> int:
    """A competition open for entries on the shared database (made once: the first module to need it)."""
    from datetime import UTC, datetime, timedelta

    from ladder import competitions

    found = competitions.list_competitions(pool, limit=1)
    if found:
        return found[0].id
    with pool.connection() as conn:
        org = int(conn.execute("INSERT INTO accounts (username, password_hash, role) VALUES "
                               "('schema-organiser', 'x', 'organiser') RETURNING id").fetchone()[0])
    now = datetime.now(UTC)
    return competitions.create_competition(pool, organiser_id=org, name="schema cup", game="floriferous", now=now,
                                           deadline_at=now + timedelta(days=365), description="**fuzzed**").id


def _operations(schema: Any) -> list[Any]:
    return [result.ok() for result in schema.get_all_operations()]


def test_every_api_operation_is_described_and_read_only(fuzzed: tuple[Any, dict[str, list[Any]]]) -> None:
    schema, _ = fuzzed
    paths = {(op.method.upper(), op.path) for op in _operations(schema)}
    assert ("GET", "/api/leaderboard/{game}") in paths and ("GET", "/api/matches/{match_id}/steps/{step}") in paths
    # The public API is read-only; the only writers are the participants' and competitions' routes (Bearer/Basic).
    from web.challenges import api_router as challenges  # challenges and the owners' answers
    from web.competitions import api_router as competitions  # organisers' and entrants' writes
    from web.participants_api import router as participants
    from web.submissions import router as hosted  # hosted-bot uploads and settings

    writers = {(m, r.path) for routes in (participants.routes, hosted.routes, competitions.routes, challenges.routes)
               for r in routes for m in getattr(r, "methods", ())}
    assert {(m, p) for m, p in paths if m != "GET"} <= writers
    assert ("POST", "/api/accounts") in paths and ("POST", "/api/bots/{bot_id}/token") in paths
    assert {("GET", "/api/competitions/{competition_id}/table"),
            ("GET", "/api/competitions/{competition_id}/evaluation"),
            ("POST", "/api/competitions"), ("POST", "/api/competitions/{competition_id}/entries"),
            ("POST", "/api/competitions/{competition_id}/disqualify"),
            ("POST", "/api/competitions/{competition_id}/extend")} <= paths


def test_api_conforms_to_its_openapi_and_never_fails(fuzzed: tuple[Any, dict[str, list[Any]]]) -> None:
    # schemathesis' pytest plugin (lazy fixtures) does not support pytest 9 yet, so each operation's
    # strategy is driven by hypothesis directly; the checks are schemathesis' own (call_and_validate).
    schema, known = fuzzed
    statuses: dict[int, int] = {}
    for operation in _operations(schema):
        for mode, examples in ((GenerationMode.POSITIVE, 20), (GenerationMode.NEGATIVE, 6)):

            @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
                      derandomize=True, database=None)
            @given(case=operation.as_strategy(generation_mode=mode), real=st.booleans(), data=st.data())
            def run(case: Any, real: bool, data: Any) -> None:
                if real and case.path_parameters and not case.meta.generation.mode.is_negative:
                    for name in case.path_parameters:
                        case.path_parameters[name] = data.draw(st.sampled_from(known[name]))
                response = case.call_and_validate()
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

            try:
                run()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE  # an operation without parameters has no invalid request
    assert not any(code >= 500 for code in statuses)
    assert statuses.get(200, 0) >= 50 and statuses.get(404, 0) > 0 and statuses.get(422, 0) > 0, statuses
