"""The macOS box: a Seatbelt profile for `sandbox-exec`, generated per command (write only the bound paths, no network).

The profile language is Apple's SBPL (a Scheme dialect; facts from Apple's sandbox-exec(1) man
page and the profiles macOS ships in /usr/share/sandbox, which Codex CLI's and Chromium's
profiles also follow). Paths never enter the profile's text: each is passed as a parameter
(`sandbox-exec -D NAME=value`, read with `(param "NAME")`), so a path with a quote or a
parenthesis cannot change the rules. What the profile says:
- everything is denied unless allowed (`(deny default)`), the network included: no rule
  allows `network*`;
- reading files, running programs, forking, and what a process needs to start are allowed;
- writing (creating, changing, removing, renaming) is allowed only beneath the WRITE_n paths
  (the throwaway HOME, TMPDIR and bytecode cache) and to the exact FILE_n files (the ones the
  approval covers), and to /dev/null and the terminal devices.
It cannot run on Linux; tests check the generated text (tests/workspace/test_boxes.py).
"""

from __future__ import annotations

BASE = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow file-read*)
(allow file-ioctl (literal "/dev/null") (literal "/dev/tty"))
(allow file-write-data (literal "/dev/null") (literal "/dev/tty") (literal "/dev/dtracehelper"))
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo")
                   (global-name "com.apple.system.notification_center"))
(allow ipc-posix-shm-read-data (ipc-posix-name "apple.shm.notification_center"))
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
"""


def profile(write: list[str], files: list[str]) -> tuple[str, list[str]]:
    """The profile's text and the `-D NAME=value` arguments that bind its paths."""
    rules = [BASE.rstrip("\n")]
    params: list[str] = []
    for i, path in enumerate(write):
        rules.append(f'(allow file-write* (subpath (param "WRITE_{i}")))')
        params += ["-D", f"WRITE_{i}={path}"]
    for i, path in enumerate(files):
        rules.append(f'(allow file-write-data (literal (param "FILE_{i}")))')
        params += ["-D", f"FILE_{i}={path}"]
    return "\n".join(rules) + "\n", params


def argv(command: list[str], write: list[str], files: list[str]) -> list[str]:
    """`command` run by `sandbox-exec` under the generated profile."""
    text, params = profile(write, files)
    return ["/usr/bin/sandbox-exec", "-p", text, *params, "--", *command]
