"""Errors raised by the ladder package.

Every error derives from :class:`LadderError`; each also derives from the
built-in class a caller would naturally catch (``ValueError`` for bad input,
``LookupError`` for a missing row, ``ConnectionError`` for an unreachable
server). Errors of the rules engines (``games.api.UnknownGameError``,
``games.api.InvalidOptionError``) pass through unchanged.
"""

from __future__ import annotations


class LadderError(Exception):
    """Base class of every error raised by ``ladder``."""


class DatabaseUnavailableError(LadderError, ConnectionError):
    """The PostgreSQL server cannot be reached; the message names the URL without its password."""


class BotExistsError(LadderError, ValueError):
    """A bot with this name is already registered (bot names are unique)."""


class InvalidBotNameError(LadderError, ValueError):
    """A bot name or version is empty, too long, or has non-printable characters."""


class BotNotFoundError(LadderError, LookupError):
    """No bot has this id or name."""


class BotRevokedError(LadderError, ValueError):
    """The bot's token was revoked; it cannot get a new token or join a tournament."""


class TournamentError(LadderError, ValueError):
    """A tournament cannot be created or planned as asked (too few bots, bad player count, ...)."""


class TournamentNotFoundError(LadderError, LookupError):
    """No tournament has this id."""


class MatchNotFoundError(LadderError, LookupError):
    """No match has this id."""


class ResultError(LadderError, ValueError):
    """A match result is malformed or does not fit the planned match (seats, bots, ranks)."""


class ChallengeError(LadderError, ValueError):
    """A challenge cannot be made as asked (unknown game or option, wrong number of bots, a
    repeated, unknown or revoked bot, a bad time control or expiry); nothing was written."""


class ChallengeLimitError(ChallengeError):
    """The challenger already has as many challenges pending or running as the site allows
    (``PARTERRE_MAX_OPEN_CHALLENGES``); the web API answers 429."""


class TournamentClosedError(TournamentError):
    """The tournament takes no more entries: its entry window has closed, or it never had one."""


class BotLimitError(LadderError, PermissionError):
    """The account already has as many bots as the site allows (``PARTERRE_MAX_BOTS_PER_ACCOUNT``,
    retired ones included); nothing was written. The web answers 409."""


class CompetitionError(LadderError, ValueError):
    """A competition cannot be created, entered or changed as asked (dates in the wrong order, a bad
    limit, a bot of another game, a retired bot, one already entered...); nothing was written."""


class CompetitionNotFoundError(LadderError, LookupError):
    """No competition has this id."""


class CompetitionClosedError(CompetitionError):
    """Not now: the competition is not open for entries yet, its deadline has passed, or its final
    evaluation has started (or has not, for what needs it); the message gives the time."""


class CompetitionLimitError(CompetitionError):
    """The account already has as many bots in the competition as it allows; nothing was written."""


class CompetitionPermissionError(LadderError, PermissionError):
    """The account may not do this: only an organiser (or an admin) creates a competition, and only
    its organiser (or an admin) uses its organiser tools."""


class ChallengeAnswerError(LadderError, ValueError):
    """A challenge cannot take this answer now: its owner answered already, another owner declined it, or
    it expired (:mod:`ladder.challenge_answers`); nothing was written. The web answers 409."""
