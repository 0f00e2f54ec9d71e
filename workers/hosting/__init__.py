"""Hosted bots on the workers (docs/hosted.md): the sandbox and the processes that run a hosted bot.

* :mod:`workers.hosting.sandbox` (``python -m workers.hosting.sandbox``): the keeper of one sandboxed bot
  process, with its cgroup (:mod:`workers.hosting.cgroups`) and what it reads of the host
  (:mod:`workers.hosting.host`);
* :mod:`workers.hosting.seat` (``python -m workers.hosting.seat``): one hosted seat of a rated match, the
  SDK's stdio adapter around a sandbox, or :mod:`workers.hosting.grpc_relay` for a gRPC bot;
* :mod:`workers.hosting.seats`: the worker that runs a rated match starts and stops its hosted seats;
* :mod:`workers.hosting.validation`: unpack, validate and regression-test a new version; its games are
  played by ``python -m workers.hosting.head_to_head`` (stdio bots) or by :mod:`workers.hosting.trial_games`
  (gRPC bots: trials on a referee of the cluster);
* :mod:`workers.hosting.run_dirs` and :mod:`workers.hosting.logs`: the per-run folders and the worker's
  own log files.
"""
