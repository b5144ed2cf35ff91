"""The auto-approve allow-list (gate/allowlist.py): read-only and test commands only, whatever the order of options."""

from __future__ import annotations

import pytest

from duckflow.gate.allowlist import unlisted

LISTED = ["ls -la", "cat a.txt | wc -l", "grep -rn foo src 2>/dev/null", "head -n 5 a.txt && tail a.txt",
          "git status", "git diff --stat", "git log --oneline -5", "git show HEAD:a.py",
          "find . -name '*.py'", "sort a.txt", "uniq a.txt", "pytest -q", "python3 -m pytest -x tests",
          "npm test", "make test", "ls 2>&1 | head", "echo done > /dev/null", "diff a b", "ls\ncat a",
          "ls && cat a || true", "cat a.txt &> /dev/null"]
UNLISTED = ["sort -o keep.txt /dev/null", "sort -uo keep.txt a", "sort --output=keep.txt a",
            "sort --compress-program=sh a", "uniq IN OUT", "find . -delete", "find . -exec rm {} +",
            "find . -fprint x", "tail -f log", "rg --pre=sh foo", "tree -o x", "date -s 2020-01-01",
            "git -c alias.x='!rm k' x", "git -C . status", "git config alias.x '!rm k'",
            "git commit -m x", "git diff --output=keep.txt", "git diff --ext-diff",
            "git grep -Ovim foo", "git log --output keep.txt", "ls > keep.txt", "ls >> keep.txt",
            "echo $(rm keep.txt)", "echo `rm keep.txt`", "cat <<EOF\nx\nEOF", "ls &", "(ls)",
            "FOO=1 ls", "make", "npm run build", "tar -C . -xf a.tar", "sed -n 'w k' a", "cc -o k m.c",
            "chmod 000 keep.txt", "gzip keep.txt", "bash -c ls", "./run.sh", "/bin/ls",
            "python3 -c 'print(1)'", "python3 old.py", "awk '{print > \"k\"}' a", "xargs rm",
            "split -b 1 k k", "tee k", "env ls", "nohup ls", "ls;\nrm keep.txt", "ls;;rm k",
            "ls\n\nrm k", "ls |& rm k", "ls >| k", "sort --out=keep.txt a", "sort --outp keep.txt a",
            "git diff --out=keep.txt", "rg --hostname-bin=sh x", "cat ~/.ssh/id_rsa", "cat /etc/passwd",
            "head ../secret", "git show --textconv HEAD:a", "grep -f /etc/shadow x", "find / -name x",
            "pytest --basetemp=/root/work", "python3 -m pytest --junitxml=../x"]


@pytest.mark.parametrize("command", LISTED)
def test_read_only_and_test_commands_are_listed(command: str) -> None:
    assert unlisted(command) == ""


@pytest.mark.parametrize("command", UNLISTED)
def test_everything_else_is_not(command: str) -> None:
    assert unlisted(command) != ""


def test_run_tests_without_a_command_is_the_projects_test_command() -> None:
    assert unlisted(None, tool="run_tests") == "" and unlisted(None) != ""


def _text(body: str):  # type: ignore[no-untyped-def]
    return lambda path: body


def test_a_new_script_runs_unasked_only_when_the_analysis_clears_it() -> None:
    ok = "import json\nprint(json.dumps([1]))\n"
    assert unlisted("python3 new.py a b", written={"new.py"}, read_text=_text(ok)) == ""
    assert "not written" in unlisted("python3 new.py", written=set(), read_text=_text(ok))
    # with bubblewrap (no network, read-only binds) a repository's own script may run
    assert unlisted("python3 report.py", written=set(), plain=False, read_text=_text(ok)) == ""
    bad = "import shutil\nshutil.rmtree('src')\n"
    assert unlisted("python3 new.py", written={"new.py"}, read_text=_text(bad)) != ""


def test_a_new_script_with_the_network_runs_unasked_only_in_the_sandbox() -> None:
    body = "from urllib import request\nrequest.urlopen('http://127.0.0.1:9/')\n"
    why = unlisted("python3 send.py", written={"send.py"}, plain=True, read_text=_text(body))
    assert "network" in why
    assert unlisted("python3 send.py", written={"send.py"}, plain=False, read_text=_text(body)) == ""


def test_without_a_sandbox_tests_the_session_wrote_with_the_network_wait() -> None:
    body = "import socket\n\ndef test_x():\n    socket.create_connection(('127.0.0.1', 9))\n"
    files = {"tests/test_x.py": body, "calc.py": "print(1)\n"}
    assert "network" in unlisted(None, tool="run_tests", written=set(files), plain=True, read_text=files.get)
    assert "network" in unlisted("pytest -q", written=set(files), plain=True, read_text=files.get)
    assert unlisted("pytest -q", written=set(files), plain=False, read_text=files.get) == ""
    assert unlisted("pytest -q", written={"calc.py"}, plain=True, read_text=files.get) == ""


def test_without_a_sandbox_a_workspace_module_the_script_imports_is_read_for_the_network() -> None:
    files = {"new.py": "import helper\nhelper.go()\n",
             "helper.py": "import pkg\ndef go():\n    pkg.send()\n",
             "pkg/__init__.py": "import socket\ndef send():\n    socket.socket()\n"}
    why = unlisted("python3 new.py", written={"new.py"}, plain=True, read_text=files.get)
    assert "network" in why
    files["pkg/__init__.py"] = "def send():\n    return 1\n"
    assert unlisted("python3 new.py", written={"new.py"}, plain=True, read_text=files.get) == ""


def test_a_function_call_check_is_judged_as_its_module() -> None:
    """The loop's check `python3 -c "import m; print(m.f(2))"` runs unasked when `m.py` would:
    a module this session wrote, harmless and offline; anything else in `-c` waits."""
    texts = {"m.py": "def f(x):\n    return x * 2\n", "net.py": "import urllib.request\ndef f(x):\n    return x\n"}
    check = 'python3 -c "import m; print(m.f(2))"'
    assert unlisted(check, written={"m.py"}, plain=True, read_text=texts.get) == ""
    assert "was not written" in unlisted(check, written=set(), plain=True, read_text=texts.get)
    assert "network" in unlisted('python3 -c "import net; print(net.f(2))"', written={"net.py"},
                                 plain=True, read_text=texts.get)
    assert unlisted('python3 -c "import m; m.f(2)"', written={"m.py"}, plain=True, read_text=texts.get) != ""
    assert unlisted("python3 -c \"import shutil; print(shutil.rmtree('src'))\"", written={"m.py"},
                    plain=True, read_text=texts.get) != ""
