#!/usr/bin/env python3
"""make run on a real terminal, as a newcomer does it, inside the check's root (check.sh).

Runs ARGV (`make run`) as the session leader of a new PTY, so make is the terminal's
controlling process as in a terminal window. Types a first prompt, answers y to the demo's two
approvals, waits for its closing line, then closes the PTY (the window goes away: only make,
the session leader, gets SIGHUP, and make waits for its recipe). Passes when make ends by
itself and nothing else is left running in the PID namespace the check made for this run: no
chat, no daemon, no mock model. Everything the terminal showed is written to stdout.

usage: pty_drive.py TIMEOUT_SECONDS ARGV...
"""
import os
import pty
import select
import sys
import time

# What the demo shows, and what a newcomer types at each point (clients/cli/demo/demo.json).
SCRIPT = [
    ("the offline demo model answers", None),
    ("> ", b"show me\r"),
    ("[y]es", b"y\r"),
    ("hello from the sandbox", None),
    ("[y]es", b"y\r"),
    ("(patch applied)", None),
    ("Done: hello.txt and NOTES.md", None),
    ("> ", None),
]


def ancestors():
    """Our pid and our ancestors' in this PID namespace (the check's init, the user's shell)."""
    pids, pid = set(), os.getpid()
    while pid > 0 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return pids


def leftovers():
    """Processes in this PID namespace that are neither us nor our ancestors."""
    keep, left = ancestors(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in keep:
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    continue  # dead, waiting for its reaper: not running
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # gone meanwhile
        left.append(f"{name} {cmd}")
    return left


def main():
    timeout = float(sys.argv[1])
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[2], sys.argv[2:])
    seen, pos = b"", 0
    deadline = time.monotonic() + timeout
    for want, answer in SCRIPT:
        while True:
            at = seen.find(want.encode(), pos)
            if at >= 0:
                pos = at + len(want)
                break
            left = deadline - time.monotonic()
            r = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            try:
                chunk = os.read(fd, 65536) if r else b""
            except OSError:
                chunk = b""
            if not chunk:
                sys.stdout.write(seen.decode(errors="replace"))
                print(f"\npty_drive: FAILED: never saw {want!r}")
                return 1
            seen += chunk
        if answer is not None:
            os.write(fd, answer)
    sys.stdout.write(seen.decode(errors="replace"))
    print("\npty_drive: the demo completed; closing the terminal")
    os.close(fd)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            print(f"pty_drive: make ended (wait status {status:#x})")
            break
        time.sleep(0.1)
    else:
        print("pty_drive: FAILED: make still runs 30 s after its terminal closed")
        return 1
    end = time.monotonic() + 10
    while leftovers() and time.monotonic() < end:
        time.sleep(0.1)
    left = leftovers()
    if left:
        print("pty_drive: FAILED: left running after the terminal closed:")
        for line in left:
            print("  " + line)
        return 1
    print("pty_drive: nothing left running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
