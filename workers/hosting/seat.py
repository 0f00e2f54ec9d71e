"""One seat of a hosted bot in a rated match: the stdio adapter around a sandbox, for one match (docs/hosted.md).

``python -m workers.hosting.seat --address HOST:PORT --log-dir DIR -- SANDBOX COMMAND...``
is what a worker starts for each hosted bot a match seats
(``workers.hosting.seats``). It is the stdio adapter
(:class:`bots.stdio.StdioBot`) with one child — the sandbox keeper's command
line (``python -m workers.hosting.sandbox ...``) — connected with the token it reads
from ``$PARTERRE_BOT_TOKEN``, and:

* the token is removed from this process's environment before any child
  starts, so neither the keeper nor the bot ever has it (the sandbox is
  started with an empty environment anyway); it is never logged;
* it plays **one** match, the one it was started for (``--match-id`` and
  ``--attempt``: ``Hello.only_match_id`` and ``only_attempt``, so the referee
  seats it in no other match of the bot, nor in another attempt of that one;
  and ``Hello.max_matches = 1``), and exits;
* ``SIGTERM`` *drains*: when no match is in progress it stops at once; when
  one is, it stops as soon as that match ends, so a worker never cuts a
  match short; a second ``SIGTERM`` (or ``SIGINT``) stops at once;
* it connects only once its child is **ready** (or after :data:`READY_WAIT_S`):
  it writes one ``{"type":"hello","protocol":"parterre-stdio/1"}`` line (bots
  ignore types they do not know, docs/bots.md §5) and waits until the child has
  read it — the pipe to its stdin is empty (``FIONREAD``) — so the sandbox's,
  the interpreter's and the imports' start-up are not charged to the first
  decision (the referee asks as soon as the seat is connected).

With ``--grpc-dir DIR`` (a bot whose manifest says ``protocol = "grpc"``)
there is no stdio adapter: this process runs :class:`workers.hosting.grpc_relay.GrpcRelay`
on ``DIR/referee.sock`` with the token (``max_matches=1``) and starts the
command (the keeper, given the same ``--grpc-dir``) with stdin closed; the
bot connects itself through the socket (the relay puts ``--match-id`` in its
``Hello``, whatever the bot sends). The match over, the relay ends the
stream and the keeper is stopped; ``SIGTERM`` drains the same way.

Exit status: 0 after a match or a stop, 1 when the command cannot run, 3 when
the referee refuses the token (a revoked credential).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import logging
import os
import signal
import struct
import sys
import termios
import time

from bots.sdk import AuthenticationError, MatchResult
from bots.stdio import StdioBot, StdioError, _Child
from bots.stdio_lines import PROTOCOL

TOKEN_ENV = "PARTERRE_BOT_TOKEN"
HELLO_LINE = b'{"type":"hello","protocol":"' + PROTOCOL.encode() + b'"}\n'
READY_WAIT_S = 10.0
"""Longest wait for a fresh child to read its first line before the seat connects anyway (the referee's
no-show window, ``PARTERRE_NO_SHOW_TIMEOUT_MS``, is 30 s)."""


def unread_bytes(fd: int) -> int:
    """Bytes written to the pipe ``fd`` (either end) that its reader has not read yet."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


class HostedSeat(StdioBot):
    """:class:`StdioBot` whose ``SIGTERM`` waits for the match in progress (see the module doc)."""

    name = "hosted-seat"
    draining = False

    ready_wait_s = READY_WAIT_S

    async def _start_child(self) -> _Child:
        """Start the child, then wait until it has read :data:`HELLO_LINE` (see the module doc)."""
        child = await super()._start_child()
        proc = child.proc
        assert proc is not None and proc.stdin is not None
        t0 = time.monotonic()
        try:
            proc.stdin.write(HELLO_LINE)
            await proc.stdin.drain()
            fd = proc.stdin.transport.get_extra_info("pipe").fileno()
            while proc.returncode is None and unread_bytes(fd) > 0:
                if time.monotonic() - t0 > self.ready_wait_s:
                    child.note(f"had not read its first line after {self.ready_wait_s:.0f} s; connecting anyway")
                    return child
                await asyncio.sleep(0.01)
        except (OSError, AttributeError) as exc:  # it exited (the adapter replaces it), or no pipe to ask
            child.note(f"readiness not known: {exc}")
            return child
        child.note(f"ready (read its first line) after {time.monotonic() - t0:.3f} s")
        return child

    def in_match(self) -> bool:
        """True while a match holds this adapter's child."""
        return bool(self._slots)

    def drain(self) -> None:
        """Stop now when idle, else once the match in progress ends; a second call stops now."""
        if self.draining or not self.in_match():
            self.stop()
            return
        self.draining = True
        logging.getLogger(__name__).info("draining: stopping when match(es) %s end", sorted(self._slots))

    def on_match_ended(self, result: MatchResult) -> None:
        super().on_match_ended(result)
        if self.draining and not self.in_match():
            self.stop()


async def play_grpc(address: str, token: str, grpc_dir: str, command: list[str], env: dict[str, str],
                    match_id: int = 0, attempt: int = 0) -> int:
    """The gRPC seat (see the module doc); returns the exit status."""
    from workers.hosting.grpc_relay import GrpcRelay
    from workers.hosting.sandbox import GRPC_SOCKET

    relay = GrpcRelay(os.path.join(grpc_dir, GRPC_SOCKET), address, token, max_matches=1, only_match_id=match_id,
                      only_attempt=attempt)
    await relay.start()
    stop = asyncio.Event()
    draining = False

    def drain() -> None:
        nonlocal draining
        logging.getLogger(__name__).info("SIGTERM: %s", "draining" if relay.in_match and not draining else "stopping")
        if draining or not relay.in_match:
            stop.set()
        draining = True

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, drain)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    proc = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.DEVNULL, env=env)
    waits = {asyncio.ensure_future(w) for w in (proc.wait(), relay.done.wait(), stop.wait())}
    try:
        while not (proc.returncode is not None or relay.done.is_set() or stop.is_set()):
            _, waits = await asyncio.wait(waits, timeout=0.2, return_when=asyncio.FIRST_COMPLETED)
            if draining and not relay.in_match:
                stop.set()
    finally:
        for w in waits:
            w.cancel()
        if proc.returncode is None:
            proc.terminate()  # the keeper kills its sandbox's tree
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await relay.stop()
    print(f"hosted seat: {relay.matches_ended} match(es) played (gRPC, {relay.streams} stream(s))", file=sys.stderr)
    return 3 if relay.refused else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m workers.hosting.seat``: see the module doc."""
    p = argparse.ArgumentParser(prog="python -m workers.hosting.seat", description=__doc__.splitlines()[0])
    p.add_argument("--address", required=True, help="the referee's bot endpoint host:port")
    p.add_argument("--log-dir", required=True, help="the adapter's notes per child (operators only)")
    p.add_argument("--name", default="hosted")
    p.add_argument("--version", default="1")
    p.add_argument("--grpc-dir", help="a gRPC bot: relay the referee on DIR/referee.sock (see the module doc)")
    p.add_argument("--match-id", type=int, default=0,
                   help="the match this seat was started for: the referee seats it in no other (0: any)")
    p.add_argument("--attempt", type=int, default=0, help="with --match-id: the attempt of it (0: any)")
    p.add_argument("command", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)
    command = ns.command[1:] if ns.command[:1] == ["--"] else ns.command
    token = os.environ.pop(TOKEN_ENV, "")
    if not token or not command:
        p.error(f"needs ${TOKEN_ENV} and a command")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    if ns.grpc_dir:
        return asyncio.run(play_grpc(ns.address, token, ns.grpc_dir, command, env, ns.match_id, ns.attempt))
    bot = HostedSeat(command, log_dir=ns.log_dir, env=env, name=ns.name, version=ns.version,
                     max_concurrent_matches=1, stop_grace_s=1.0)

    async def play() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, bot.drain)
        loop.add_signal_handler(signal.SIGINT, bot.stop)
        await bot.arun(ns.address, token, stop_after_matches=1, only_match_id=ns.match_id,
                       only_attempt=ns.attempt)

    try:
        asyncio.run(play())
    except StdioError as exc:
        print(f"hosted seat: {exc}", file=sys.stderr)
        return 1
    except AuthenticationError as exc:
        print(f"hosted seat: the referee refused the credential: {exc}", file=sys.stderr)
        return 3
    print(f"hosted seat: {len(bot.stats.results)} match(es) played", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
