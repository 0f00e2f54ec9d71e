"""Write deploy/seccomp/worker.json, the seccomp profile of the worker container (docs/hosted.md).

The worker runs hosted bots in bubblewrap as an unprivileged user (uid 10001), which needs
``clone``/``unshare`` with ``CLONE_NEWUSER`` and the other namespace flags, then ``mount``,
``umount2`` and ``pivot_root`` inside the new user namespace. The engines' default profiles refuse
those to a container without ``CAP_SYS_ADMIN``; ``seccomp=unconfined`` would allow every system
call. This profile is an allowlist instead: the default action is ``SCMP_ACT_ERRNO`` (EPERM), and
the allowed calls are every x86_64 system call of the kernel headers this script reads
(``asm/unistd_64.h``) except :data:`DENIED`, so a call newer than the file is refused too.

Run it where the headers are (Debian: ``linux-libc-dev``) and commit the result:

    python3 deploy/seccomp/make_worker_profile.py            # rewrites deploy/seccomp/worker.json
    python3 deploy/seccomp/make_worker_profile.py --check    # exit 1 when the file differs

Standard library only. tests/repository/test_deploy.py checks the committed file (and regenerates it where
the headers exist).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
OUT = Path(__file__).resolve().with_name("worker.json")

NEEDED_BY_BWRAP = ("clone", "clone3", "unshare", "mount", "umount2", "pivot_root", "chroot", "sethostname")
"""What the default profiles refuse and bubblewrap needs (the reason this file exists)."""

DENIED = {
    # the kernel itself: modules, kexec, reboot, swap, accounting, the clock, the console log
    "init_module": "kernel module", "finit_module": "kernel module", "delete_module": "kernel module",
    "create_module": "kernel module", "query_module": "kernel module", "get_kernel_syms": "kernel module",
    "kexec_load": "kexec", "kexec_file_load": "kexec", "reboot": "reboot", "swapon": "swap", "swapoff": "swap",
    "acct": "process accounting", "settimeofday": "the host clock", "clock_settime": "the host clock",
    "clock_adjtime": "the host clock", "adjtimex": "the host clock", "syslog": "the kernel log",
    "vhangup": "terminals", "iopl": "I/O ports", "ioperm": "I/O ports", "modify_ldt": "segment tables",
    # not namespaced, or a known escape or attack surface
    "add_key": "keyrings are not namespaced", "keyctl": "keyrings are not namespaced",
    "request_key": "keyrings are not namespaced", "bpf": "eBPF", "perf_event_open": "perf events",
    "userfaultfd": "exploit primitive", "lookup_dcookie": "profiling", "open_by_handle_at": "file handles (escape)",
    "name_to_handle_at": "file handles (escape)", "quotactl": "quotas", "quotactl_fd": "quotas",
    "nfsservctl": "removed", "uselib": "obsolete", "_sysctl": "obsolete", "sysfs": "obsolete",
    "ustat": "obsolete", "fanotify_init": "file-system wide monitoring",
    "io_uring_setup": "io_uring", "io_uring_enter": "io_uring", "io_uring_register": "io_uring",
    # other processes: nothing of the worker needs to read or trace another process
    "ptrace": "other processes", "process_vm_readv": "other processes", "process_vm_writev": "other processes",
    "kcmp": "other processes", "pidfd_getfd": "other processes", "setns": "entering other namespaces",
    # NUMA placement (CAP_SYS_NICE in the default profiles)
    "mbind": "NUMA", "set_mempolicy": "NUMA", "set_mempolicy_home_node": "NUMA", "migrate_pages": "NUMA",
    "move_pages": "NUMA",
    # the new mount API: bubblewrap 0.8 uses mount(2); these would only widen what a namespace can do
    "open_tree": "new mount API", "move_mount": "new mount API", "fsopen": "new mount API",
    "fsconfig": "new mount API", "fsmount": "new mount API", "fspick": "new mount API",
    "mount_setattr": "new mount API",
    # never implemented on x86_64
    "afs_syscall": "unimplemented", "tuxcall": "unimplemented", "security": "unimplemented",
    "getpmsg": "unimplemented", "putpmsg": "unimplemented", "vserver": "unimplemented",
}
"""System calls the worker's processes may not make, with the reason."""


def syscalls(header: Path = HEADER) -> list[str]:
    names = re.findall(r"^#define __NR_(\w+)\s+\d+", header.read_text(), re.M)
    if len(names) < 300:
        raise SystemExit(f"{header}: only {len(names)} system calls found")
    return sorted(set(names))


def profile(names: list[str]) -> dict[str, object]:
    missing = [n for n in NEEDED_BY_BWRAP if n not in names]
    if missing:
        raise SystemExit(f"the headers lack {missing}")
    allowed = [n for n in names if n not in DENIED]
    return {
        "comment": "deploy/seccomp/make_worker_profile.py wrote this file; do not edit it by hand (docs/hosted.md)",
        "defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [{"names": allowed, "action": "SCMP_ACT_ALLOW"}],
    }


def render(header: Path = HEADER) -> str:
    return json.dumps(profile(syscalls(header)), indent=1) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="compare with the committed file instead of writing it")
    p.add_argument("--header", type=Path, default=HEADER)
    args = p.parse_args()
    text = render(args.header)
    if args.check:
        same = OUT.exists() and OUT.read_text() == text
        print(f"{OUT}: {'up to date' if same else 'differs from what the headers give'}")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"{OUT}: {len(json.loads(text)['syscalls'][0]['names'])} system calls allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
