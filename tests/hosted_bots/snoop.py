"""A hosted Python bot that hunts for its credential before playing (docs/hosted.md, the sandbox tests).

It prints to stderr (its owner's log) everything a bot could read that might hold the token the
worker connected it with: its environment, and the environment and command line of every process
it can see in /proc; then ``SNOOP-DONE <processes seen>``; then it plays as ``greedy.py``."""

import os
import runpy
import sys

seen = 0
print("ENV", dict(os.environ), file=sys.stderr)
for entry in os.listdir("/proc"):
    if entry.isdigit():
        seen += 1
        for part in ("environ", "cmdline"):
            try:
                with open(f"/proc/{entry}/{part}", "rb") as fh:
                    print("PROC", entry, part, fh.read().replace(b"\0", b" ").decode("utf-8", "replace"),
                          file=sys.stderr)
            except OSError as exc:
                print("PROC", entry, part, "unreadable:", exc, file=sys.stderr)
print("SNOOP-DONE", seen, file=sys.stderr, flush=True)
sys.argv = ["greedy.py", "0", "snoop"]
runpy.run_path("greedy.py", run_name="__main__")
