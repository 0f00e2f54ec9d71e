"""The gRPC referee (DESIGN §3, §4): bot sessions, match rooms, clocks, verdicts.

Public API:

* :func:`referee.server.create_server` / :func:`referee.server.serve`
* :class:`referee.tokens.RedisTokenStore`, :class:`referee.tokens.StaticTokenStore`
* :class:`referee.server.TlsConfig`; :class:`referee.cluster.ClusterConfig` (several referees)
* :func:`referee.replay.verify`
* :class:`referee.testing.Harness` and :class:`referee.testing.ThreadedReferee` (tests and benchmarks)

Decisions taken where DESIGN is silent are written down in ``referee/README.md``.
"""
