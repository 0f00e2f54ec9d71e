"""The gRPC referee (docs/architecture.md, docs/referee.md): bot sessions, match rooms, clocks, verdicts.

Public API:

* :func:`referee.server.create_server` / :func:`referee.server.serve`
* :class:`referee.tokens.RedisTokenStore`, :class:`referee.tokens.StaticTokenStore`
* :class:`referee.server.TlsConfig`; :class:`referee.cluster.ClusterConfig` (several referees)
* :func:`referee.replay.verify`
* :class:`referee.testing.Harness` and :class:`referee.testing.ThreadedReferee` (tests and benchmarks)

The referee's own decisions, where docs/architecture.md leaves a choice open, are in ``referee/README.md``, "Decisions".
"""
