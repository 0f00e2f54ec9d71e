"""The stdio adapter: any executable becomes a Parterre bot (``parterre connect``).

``parterre connect --exec "COMMAND" --token T`` keeps one ``Referee.Connect``
stream open (the SDK's :class:`~bots.sdk.Bot`) and runs COMMAND as child
processes that speak a line protocol on stdin/stdout, one JSON object per
line (``docs/bots.md``, "The stdio line protocol"):

* to the child: ``match_started``, ``decision_request`` (observation, legal
  actions with index, label and action JSON, clock), ``match_ended``;
* from the child: the chosen index, one line per request (or ``resign``).

A child plays one match at a time and may play many in a row; with
``max_concurrent_matches = N`` up to N children run, one per match. The
children are started before the first match (so start-up time is not charged
to a decision) and replaced whenever one exits or is stopped.

The adapter never answers on a child's behalf. What a child does wrong
becomes the referee's verdict for its seat:

================================  ==========================================  =================
the child                         the adapter                                 verdict
================================  ==========================================  =================
exits during a match (crash)      sends ``Resign`` for that match at once     ``resigned``
prints a line that is not an      sends a Decision with no index              ``illegal_action``
integer (or beyond int32)
prints an integer out of range    forwards it unchanged                       ``illegal_action``
says nothing                      nothing: the referee's own clock fires      ``timeout``
================================  ==========================================  =================

(``crash`` is the referee's verdict for a broken gRPC stream; a child is not
the stream, and one child's crash must not end the other children's matches
on the same stream, so a crashed child resigns.) A child still thinking when
its match ends is stopped and replaced. Blank lines are ignored; a line that
arrives when no request is pending is logged and dropped (at most
``PARTERRE_STDIO_NOTES_MAX`` such notes and ``PARTERRE_STDIO_NOTES_KB`` KiB per
child, then one "N more lines ignored" note at its exit). The child's stderr
goes to a log file, where the adapter also notes each match and each exit.

Every answer is tied to the request it answers (F-21): the adapter keeps, per
child, the requests written to it in order, each as (match, attempt, seq); the
child's n-th answer line answers the n-th request line it was sent. An answer
whose request no longer exists (its match attempt is gone, or the referee has
moved on) is logged and dropped, never forwarded as the answer to another
request. When a match attempt is gone without a ``match_ended`` from the
referee (the referee died and the match started again as a new attempt with
the same match id; or it was not resumed after a reconnect), the child gets a
``match_ended`` line with ``"status": "gone"``, and a child that was still
thinking about it is stopped and replaced, so the new attempt starts with a
fresh child.

If children keep exiting before they answer a single decision
(``max_failed_starts`` in a row: a broken command), the adapter stops with
:class:`StdioError` rather than resign match after match.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bots.sdk import Bot, DecisionRequest, MatchInfo, MatchResult
from bots.stdio_lines import (
    LINE_LIMIT,
    Answer,
    decision_request_line,
    match_ended_line,
    match_started_line,
    parse_answer_debug,
)
from proto.parterre.v1 import referee_pb2 as pb

log = logging.getLogger(__name__)

NOTES_MAX_ENV = "PARTERRE_STDIO_NOTES_MAX"
"""Setting: notes a child's own output may cause in its log (default :data:`NOTES_MAX`)."""
NOTES_KB_ENV = "PARTERRE_STDIO_NOTES_KB"
"""Setting: KiB of such notes per child (default :data:`NOTES_KB`)."""
NOTES_MAX = 1000
NOTES_KB = 256


def _setting(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return max(0, int(value)) if value.strip().isdigit() else default


class StdioError(RuntimeError):
    """The bot command cannot be run: it does not start, or keeps exiting at once."""


class _Child:
    """One child process, its stdout reader and its log file."""

    def __init__(self, number: int, log_path: Path, max_chatter: int = NOTES_MAX,
                 max_chatter_bytes: int = NOTES_KB << 10) -> None:
        self.number = number
        self.log_path = log_path
        self.max_chatter, self.max_chatter_bytes = max_chatter, max_chatter_bytes
        self.chatter_notes = 0
        self.chatter_bytes = 0
        self.chatter_ignored = 0
        self.proc: asyncio.subprocess.Process | None = None
        self.log_file: IO[bytes] | None = None
        self.reader: asyncio.Task[None] | None = None
        self.slot: _Slot | None = None
        self.answers = 0
        self.exited = False
        self.stopping = False
        self.outstanding: deque[tuple[int, int, int]] = deque()
        """(match id, attempt, seq) of each request written and not yet answered, oldest first."""

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc else -1

    def note(self, text: str) -> None:
        """Append an adapter note (``# parterre: ...``) to the child's log."""
        if self.log_file is not None and not self.log_file.closed:
            stamp = time.strftime("%H:%M:%S")
            self.log_file.write(f"# parterre {stamp}: {text}\n".encode(errors="replace"))
            self.log_file.flush()

    def chatter(self, text: str) -> None:
        """A note caused by the child's own output (a stray line, a dropped or bad answer): capped per child
        at ``max_chatter`` notes and ``max_chatter_bytes`` bytes, so a bot cannot fill the disk through its
        log; past the cap the lines are counted, and :meth:`close_chatter` notes how many were ignored."""
        size = len(text.encode(errors="replace")) + 32
        if self.chatter_ignored or self.chatter_notes >= self.max_chatter \
                or self.chatter_bytes + size > self.max_chatter_bytes:
            if not self.chatter_ignored:
                self.note(f"output notes capped ({self.chatter_notes} notes, {self.chatter_bytes} bytes): "
                          f"further lines are counted, not logged")
            self.chatter_ignored += 1
            return
        self.chatter_notes += 1
        self.chatter_bytes += size
        self.note(text)

    def close_chatter(self) -> None:
        """Note how many lines the cap ignored (once; called when the child exits)."""
        if self.chatter_ignored:
            self.note(f"{self.chatter_ignored} more lines ignored")
            self.chatter_ignored = 0
            self.chatter_notes = self.max_chatter  # the cap stays reached

    def write(self, data: bytes) -> bool:
        """Queue ``data`` on the child's stdin (never blocks); False if it is closed."""
        stdin = self.proc.stdin if self.proc else None
        if stdin is None or self.exited or stdin.is_closing():
            return False
        try:
            stdin.write(data)
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            return False
        return True


@dataclass
class _Slot:
    """A match this adapter is seated in, and the child playing it."""

    info: MatchInfo
    ready: asyncio.Future[None]
    child: _Child | None = None
    pending_seq: int | None = None
    answer: asyncio.Future[int | Answer] | None = None
    debug: str = ""
    """The debug text of the answer just read (``{"index": N, "debug": "..."}``)."""
    ended: bool = False
    resigned: bool = False
    connection: int = 0


RESIGN_REASONS_KEPT = 256
"""How many matches' resignation reasons :attr:`StdioBot.resign_reasons` keeps (the newest)."""


class StdioBot(Bot):
    """A bot whose decisions come from child processes over stdin/stdout.

    Args:
        command: the program and its arguments (no shell; use ``sh -c '...'``
            for shell syntax).
        log_dir: folder for the children's stderr logs (created).
        cwd / env: working directory and environment of the children
            (default: the adapter's).
        max_failed_starts: stop with :class:`StdioError` after this many
            children in a row exit before answering any decision.
        stop_grace_s: how long a child gets to exit after its stdin closes,
            and again after SIGTERM, before SIGKILL.
        max_notes / max_note_kb: per child, the notes its own output may cause in its log (stray lines,
            dropped or bad answers) and their KiB; past either, one note says how many lines were
            ignored. None: ``PARTERRE_STDIO_NOTES_MAX`` / ``PARTERRE_STDIO_NOTES_KB`` (1000 / 256).
        **kwargs: see :class:`bots.sdk.Bot` (``name``, ``max_concurrent_matches`` ...).

    Attributes:
        log_paths: log file of every child started, in order.
        match_pids: match id -> pid of the child that played it (tests, logs).
        resign_reasons: match id -> why the adapter resigned it (a child that exited, with its log), for a
            local result table; the referee only hears ``Resign``.
    """

    name = "stdio"

    def __init__(
        self, command: Sequence[str], *, log_dir: str | os.PathLike[str], cwd: str | None = None,
        env: Mapping[str, str] | None = None, max_failed_starts: int = 3, stop_grace_s: float = 1.0,
        max_notes: int | None = None, max_note_kb: int | None = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not command:
            raise ValueError("the bot command is empty")
        self.command = list(command)
        self.log_dir = Path(log_dir)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.max_failed_starts = max_failed_starts
        self.stop_grace_s = stop_grace_s
        self.max_notes = _setting(NOTES_MAX_ENV, NOTES_MAX) if max_notes is None else max_notes
        self.max_note_bytes = (_setting(NOTES_KB_ENV, NOTES_KB) if max_note_kb is None else max_note_kb) << 10
        self.log_paths: list[Path] = []
        self.match_pids: dict[int, int] = {}
        self.resign_reasons: dict[int, str] = {}
        self._stamp = time.strftime("%Y%m%d-%H%M%S")
        self._children: list[_Child] = []
        self._idle: list[_Child] = []
        self._slots: dict[int, _Slot] = {}
        self._own_tasks: set[asyncio.Task[Any]] = set()
        self._failed_starts = 0
        self._numbers = 0
        self._closing = False
        self._connections = 0
        self._connected_at = 0.0
        self.fatal: StdioError | None = None

    # -- running ----------------------------------------------------------------------
    async def arun(self, address: str, token: str, **kwargs: Any) -> None:
        """Start the children, then play like :meth:`Bot.arun`; stop the children on return.

        Raises:
            StdioError: the command cannot be started or keeps exiting at once.
            bots.sdk.AuthenticationError: the token was refused.
        """
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._closing = False
        try:
            for _ in range(max(1, self.max_concurrent_matches)):
                self._idle.append(await self._start_child())
            self._task(self._sweep())
            await super().arun(address, token, **kwargs)
        finally:
            await self._close()
        if self.fatal is not None:
            raise self.fatal

    async def _close(self) -> None:
        """Stop every child (stdin closed, SIGTERM, SIGKILL); none outlives the adapter."""
        self._closing = True
        readers = {c.reader for c in self._children}
        for task in list(self._own_tasks):
            if task not in readers:
                task.cancel()
        children = list(self._children)
        try:
            await asyncio.gather(*[self._stop_child(c) for c in children], return_exceptions=True)
        finally:  # also when cancelled while waiting
            for child in children:
                if child.proc is not None and child.proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
                        os.killpg(child.proc.pid, signal.SIGKILL)
                if child.log_file is not None:
                    child.log_file.close()
            for task in list(self._own_tasks):
                task.cancel()
            self._children.clear()
            self._idle.clear()

    def hello(self, token: str) -> pb.BotMessage:
        """Hello, counting connections (matches not resumed after a reconnect are released)."""
        self._connections += 1
        self._connected_at = time.monotonic()
        if self.fatal is not None:  # failed before Bot.arun could take a stop()
            self.stop()
        return super().hello(token)

    def _task(self, coro: Any) -> asyncio.Task[Any]:
        # Adapter tasks outlive a reconnect (the SDK cancels its own tasks then).
        task = asyncio.create_task(coro)
        self._own_tasks.add(task)
        task.add_done_callback(self._own_tasks.discard)
        return task

    def _fail(self, message: str) -> None:
        if self.fatal is None:
            self.fatal = StdioError(message)
            log.error("%s", message)
            self.stop()

    # -- children -----------------------------------------------------------------------
    async def _start_child(self) -> _Child:
        """Start one child.

        Raises:
            StdioError: the program cannot be executed (not found, not executable).
        """
        self._numbers += 1
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", self.name)[:40].lstrip(".") or "bot"  # a file name, any bot name
        log_path = self.log_dir / f"{stem}-{self._stamp}-{os.getpid()}-child{self._numbers}.log"
        child = _Child(self._numbers, log_path, self.max_notes, self.max_note_bytes)
        child.log_file = open(child.log_path, "ab")  # noqa: SIM115 - outlives this call: closed when the child is reaped
        self.log_paths.append(child.log_path)
        child.note(f"starting {' '.join(self.command)}")
        try:
            child.proc = await asyncio.create_subprocess_exec(
                *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=child.log_file, cwd=self.cwd, env=self.env, limit=LINE_LIMIT, start_new_session=True,
            )
        except OSError as exc:
            child.note(f"cannot start: {exc}")
            child.log_file.close()
            raise StdioError(f"cannot start the bot command {self.command[0]!r}: {exc.strerror or exc}") from None
        child.note(f"started, pid {child.proc.pid}")
        self._children.append(child)
        child.reader = self._task(self._read(child))
        return child

    async def _read(self, child: _Child) -> None:
        """Route the child's stdout lines to the pending request; handle its exit."""
        assert child.proc is not None and child.proc.stdout is not None
        stdout = child.proc.stdout
        while True:
            try:
                raw = await stdout.readline()
            except ValueError:  # longer than LINE_LIMIT
                raw = b"<a line longer than %d bytes>\n" % LINE_LIMIT
            except (ConnectionResetError, BrokenPipeError):
                raw = b""
            if not raw:
                break
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            if not child.outstanding:
                child.chatter(f"ignored a line sent while no decision was pending: {text[:200]!r}")
                continue
            match_id, attempt, seq = child.outstanding.popleft()  # the request this line answers
            slot = child.slot
            if slot is None or slot.ended or slot.info.match_id != match_id or slot.info.attempt != attempt \
                    or slot.pending_seq != seq:
                child.chatter(f"dropped the answer {text[:200]!r} to match {match_id} attempt {attempt} seq {seq}: "
                           "that request no longer exists")
                continue
            if slot.answer is not None and not slot.answer.done():
                answer, slot.debug = parse_answer_debug(text)
                if isinstance(answer, int):
                    child.answers += 1
                    self._failed_starts = 0
                else:
                    child.chatter(f"match {slot.info.match_id} seq {slot.pending_seq}: answer {text[:200]!r} "
                               f"is {'a resignation' if answer is Answer.RESIGN else 'not an index'}")
                slot.answer.set_result(answer)
            else:
                child.chatter(f"ignored a line sent while no decision was pending: {text[:200]!r}")
        status = await child.proc.wait()
        self._on_exit(child, status)

    def _on_exit(self, child: _Child, status: int) -> None:
        child.exited = True
        how = f"killed by signal {-status}" if status < 0 else f"exited with status {status}"
        child.close_chatter()
        child.note(how)
        if child.log_file is not None:
            child.log_file.close()
        if child in self._children:
            self._children.remove(child)
        if child in self._idle:
            self._idle.remove(child)
        slot = child.slot
        if slot is not None and not slot.ended:
            log.warning("%s: child %d (pid %d) %s during match %d; resigning it", self.name, child.number,
                        child.pid, how, slot.info.match_id)
            self._resign(slot, f"its program {how} during the match (its log: {child.log_path})")
        if child.stopping or self._closing:
            return
        if child.answers == 0:
            self._failed_starts += 1
            if self._failed_starts >= self.max_failed_starts:
                self._fail(f"the bot command {' '.join(self.command)!r} {how} {self._failed_starts} times in a "
                           f"row without answering a decision; see {child.log_path}")
                return
        self._task(self._replace())

    async def _replace(self) -> None:
        """Keep one child per possible match (idle or playing)."""
        if self._closing or self.fatal is not None:
            return
        if len(self._children) < max(1, self.max_concurrent_matches):
            try:
                self._idle.append(await self._start_child())
            except StdioError as exc:
                self._fail(str(exc))

    async def _stop_child(self, child: _Child) -> None:
        """Close stdin, then SIGTERM, then SIGKILL the child's process group."""
        child.stopping = True
        proc = child.proc
        if proc is None or child.exited:
            return
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
                    os.killpg(proc.pid, sig)
            try:
                await asyncio.wait_for(asyncio.shield(proc.wait()), self.stop_grace_s)
                break
            except TimeoutError:
                continue
        if child.reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):  # the reader ends with the pipe
                await asyncio.wait_for(asyncio.shield(child.reader), self.stop_grace_s)

    async def _retire(self, child: _Child) -> None:
        """Stop a child that is stuck (its match ended while it was thinking) and replace it."""
        await self._stop_child(child)
        await self._replace()

    # -- matches ------------------------------------------------------------------------
    def _resign(self, slot: _Slot, why: str) -> None:
        self.resign_reasons.setdefault(slot.info.match_id, why)
        while len(self.resign_reasons) > RESIGN_REASONS_KEPT:  # an adapter may play for months
            del self.resign_reasons[next(iter(self.resign_reasons))]
        if slot.answer is not None and not slot.answer.done():
            slot.answer.set_result(Answer.RESIGN)  # the pending choose() sends the Resign
        elif not slot.resigned:
            slot.resigned = True
            self.send(pb.BotMessage(resign=pb.Resign(match_id=slot.info.match_id)))

    def _slot_for(self, info: MatchInfo) -> _Slot:
        slot = self._slots.get(info.match_id)
        if slot is not None and slot.info.attempt != info.attempt:  # a new attempt: the old one is gone
            self._slot_gone(slot, f"attempt {slot.info.attempt} is gone: attempt {info.attempt} of match "
                             f"{info.match_id} started")
            slot = None
        if slot is not None:
            slot.connection = self._connections  # MatchStarted again after a reconnect: same child
            return slot
        slot = _Slot(info, asyncio.get_running_loop().create_future(), connection=self._connections)
        self._slots[info.match_id] = slot
        self._task(self._bind(slot))
        return slot

    async def _bind(self, slot: _Slot) -> None:
        """Give the match an idle child (or a new one) and send it ``match_started``."""
        try:
            child = self._idle.pop(0) if self._idle else await self._start_child()
        except StdioError as exc:
            log.error("%s: %s; resigning match %d", self.name, exc, slot.info.match_id)
            self._resign(slot, str(exc))
            slot.ready.set_result(None)
            return
        if slot.ended:  # the match ended while a child was being started
            self._idle.append(child)
            slot.ready.set_result(None)
            return
        slot.child = child
        child.slot = slot
        self.match_pids[slot.info.match_id] = child.pid
        info = slot.info
        child.note(f"match {info.match_id} started: {info.game_string}, seat {info.seat}")
        log.info("%s: match %d started: %s, seat %d (child %d, pid %d)", self.name, info.match_id, info.game_string,
                 info.seat, child.number, child.pid)
        child.write(match_started_line(info))
        slot.ready.set_result(None)

    def on_match_started(self, match: MatchInfo) -> None:
        """Bind the match to a child (see :meth:`_bind`)."""
        self._slot_for(match)

    # The SDK runs an async choose as a task (Bot._async_choose); Bot declares the plain form.
    async def choose(self, request: DecisionRequest) -> int | Answer:  # type: ignore[override]  # async: see above
        """Send the request to the match's child and wait for its line (never answers for it)."""
        try:
            return await self._ask(request)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: stdio adapter error on match %d; not answering", self.name, request.match_id)
            return Answer.NOTHING

    async def _ask(self, request: DecisionRequest) -> int | Answer:
        slot = self._slots.get(request.match_id)
        if slot is None:  # MatchStarted was missed: rebuild what it said from the request
            info = request.match or MatchInfo(
                match_id=request.match_id, game=request.game, game_string=request.game, options={},
                seat=request.seat, num_players=0, players=[], time_control={}, seed_commitment="")
            slot = self._slot_for(info)
        slot.connection = self._connections
        await asyncio.shield(slot.ready)
        child = slot.child
        if slot.ended:
            return Answer.NOTHING
        if child is None or child.exited or slot.resigned:
            return Answer.RESIGN
        if slot.pending_seq != request.seq or slot.answer is None:
            slot.pending_seq = request.seq
            slot.answer = asyncio.get_running_loop().create_future()
            if not child.write(decision_request_line(request)):
                return Answer.RESIGN if child.exited else Answer.NOTHING
            child.outstanding.append((request.match_id, request.attempt, request.seq))
        # else: the same request again after a reconnect; the child is already on it
        answer = await asyncio.shield(slot.answer)
        slot.answer = None
        slot.pending_seq = None
        if slot.debug:  # {"index": N, "debug": "..."}: sent with the Decision (docs/bots.md, "Debug text")
            request.debug(slot.debug)
            slot.debug = ""
        if answer is Answer.RESIGN:
            slot.resigned = True
        return answer

    def make_decision(self, request: DecisionRequest, index: Any) -> pb.BotMessage | bytes | None:
        """The message for the child's answer: Decision, Decision with no index, Resign, or nothing."""
        if index is Answer.NOTHING:
            return None
        if index is Answer.RESIGN:
            return pb.BotMessage(resign=pb.Resign(match_id=request.match_id))
        if index is Answer.GARBAGE:
            return pb.BotMessage(decision=pb.Decision(match_id=request.match_id, seq=request.seq))
        return super().make_decision(request, index)

    def on_match_ended(self, result: MatchResult) -> None:
        """Tell the child; free it for the next match, or stop it if it is still thinking."""
        slot = self._slots.get(result.match_id)
        if slot is None or (result.attempt and slot.info.attempt and result.attempt != slot.info.attempt):
            return  # not this attempt's ending
        del self._slots[result.match_id]
        slot.ended = True
        child = slot.child
        if child is None:
            return
        waiting = slot.answer
        stuck = (waiting is not None and not waiting.done()) or bool(child.outstanding)
        if waiting is not None and stuck:
            waiting.set_result(Answer.NOTHING)
        child.note(f"match {result.match_id} ended: {result.status}, {result.reason}; verdicts {result.verdicts}, "
                   f"ranks {result.ranks}")
        log.info("%s: match %d ended: %s, rank %s, verdict %s", self.name, result.match_id, result.reason,
                 result.rank, result.verdict)
        child.write(match_ended_line(result))
        child.slot = None
        if child.exited:
            return
        if stuck:
            child.note("still thinking when the match ended: stopping this child")
            self._task(self._retire(child))
        else:
            self._idle.append(child)

    def _slot_gone(self, slot: _Slot, reason: str) -> None:
        """A match attempt ended without MatchEnded: tell its child (``status: gone``), free
        or replace the child (see :meth:`on_match_ended`)."""
        info = slot.info
        self.on_match_ended(MatchResult(info.match_id, info.seat, [], [], [], reason, "", "gone", info.attempt))

    async def _sweep(self, every_s: float = 5.0, resume_within_s: float = 30.0) -> None:
        """Release matches that were not resumed within ``resume_within_s`` of a reconnect.

        After a reconnect the referee sends MatchStarted again for every match
        it hands back (within its grace window); the others are lost.
        """
        while True:
            await asyncio.sleep(every_s)
            if time.monotonic() - self._connected_at < resume_within_s:
                continue
            for match_id, slot in list(self._slots.items()):
                if slot.connection < self._connections:
                    log.warning("%s: match %d was not resumed after a reconnect; releasing its child", self.name,
                                match_id)
                    self._slot_gone(slot, "not resumed after a reconnect (connection lost)")
