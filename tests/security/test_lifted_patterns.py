"""The lifted detect-secrets patterns equal the installed library's, and loading them skips `requests`."""

from __future__ import annotations

import json
import subprocess
import sys

from duckflow.security.library import DATA, library_patterns, lift_patterns


def test_lifted_file_matches_the_installed_detect_secrets() -> None:
    shipped = json.loads(DATA.read_text(encoding="utf-8"))
    live = lift_patterns()
    assert shipped["plugins"] == live["plugins"], "run `python -m duckflow.security.library` to regenerate"
    assert shipped["source"] == live["source"]
    assert len(library_patterns()) == sum(len(p["patterns"]) for p in live["plugins"]) > 20


def test_masking_a_secret_does_not_import_requests_or_detect_secrets() -> None:
    code = ("import sys\nfrom duckflow.security.sanitizer import default_sanitizer\n"
            "out = default_sanitizer().mask('token ghp_Zq8rT2mW9xKp4LvN7bHc3JdF6sGy1aQe5uRi')\n"
            "assert 'ghp_' not in out.text, out.text\n"
            "print(sorted(m for m in ('requests', 'urllib3', 'detect_secrets') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
