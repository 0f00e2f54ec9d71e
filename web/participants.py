"""Participants on the web site: installs sessions and the participant routes into the app (docs/participants.md).

:func:`install` is the one call ``web.app.create_app`` makes; see
web/auth.py (sessions, CSRF, tokens, settings),
web/participants_api.py (JSON API) and web/participants_pages.py (pages), web/challenges.py (the
challenges' API, included by ``web.app`` itself: before the public API) and web/challenge_pages.py.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from starlette.middleware.sessions import SessionMiddleware

from web import auth

SESSION_MAX_AGE_S = 14 * 24 * 3600


def nav_account(request: Request) -> tuple[str, str] | None:
    """``(username, CSRF token)`` for the navigation bar of any page when this request
    carries a logged-in session, else None (no database query without a session)."""
    if "session" not in request.scope or not isinstance(request.session.get("aid"), int):
        return None
    account = auth.session_account(request)
    return None if account is None else (account.username, auth.csrf_token(request))


def install(app: FastAPI, cfg: auth.ParticipantConfig | None = None, *, secret: str | None = None) -> None:
    """Add the session middleware and the participant routers; ``app.state.participants`` = the config.

    Args:
        cfg: the settings (default :func:`web.auth.config_from_env`); tests replace
            ``app.state.participants`` after :func:`~web.app.create_app`.
        secret: session signing secret (default :func:`web.auth.session_secret`).
    """
    from web import challenge_pages, participants_api, participants_pages, submissions

    cfg = cfg or auth.config_from_env()
    app.state.participants = cfg
    app.add_middleware(SessionMiddleware, secret_key=secret or auth.session_secret(),
                       session_cookie=auth.SESSION_COOKIE, max_age=SESSION_MAX_AGE_S, same_site="lax",
                       https_only=cfg.secure_cookies)
    from ladder.owned_bots import bot_versions

    # The public bot page (bot.html) shows each announced version: a template global reading the app's pool.
    app.state.templates.env.globals["bot_versions"] = lambda bot_id: bot_versions(app.state.pool, bot_id)
    # Every page's nav (base.html) shows who is logged in, with a Log out button.
    app.state.templates.env.globals["nav_account"] = nav_account
    app.include_router(participants_api.router)
    app.include_router(participants_pages.router)
    app.include_router(challenge_pages.router)
    app.include_router(submissions.router)
    app.include_router(submissions.pages)
