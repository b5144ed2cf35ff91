"""The auto-approve allow-list (gate/allowlist.py): read-only and test commands only, whatever the order of options."""

from __future__ import annotations

import pytest

from duckflow.gate.allowlist import unlisted

LISTED = ["ls -la", "cat a.txt | wc -l", "grep -rn foo src 2>/dev/null", "head -n 5 a.txt && tail a.txt",
          "git status", "git diff --stat", "git log --oneline -5", "git show HEAD:a.py",
          "find . -name '*.py'", "sort a.txt", "uniq a.txt", "ls 2>&1 | head", "echo done > /dev/null",
          "diff a b", "ls\ncat a", "ls && cat a || true", "cat a.txt &> /dev/null"]
TESTS = ["pytest -q", "python3 -m pytest -x tests", "npm test", "make test", "ls && pytest -q",
         "python3 -m unittest -q leap_test.py"]
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
            "pytest --basetemp=/root/work", "python3 -m pytest --junitxml=../x",
            "python3 -m unittest -q ../x_test.py", "python3 -m unittest -k x -s /"]


@pytest.mark.parametrize("command", LISTED)
def test_read_only_and_test_commands_are_listed(command: str) -> None:
    assert unlisted(command) == ""


@pytest.mark.parametrize("command", TESTS)
def test_the_test_command_is_listed_only_with_a_box(command: str) -> None:
    assert unlisted(command, plain=False) == ""
    assert "no box" in unlisted(command, plain=True) and "no box" in unlisted(command)


@pytest.mark.parametrize("command", UNLISTED)
def test_everything_else_is_not(command: str) -> None:
    assert unlisted(command) != ""
    if command != "python3 old.py":  # a script: in a box it runs (the kernel decides)
        assert unlisted(command, plain=False) != ""


def test_run_tests_without_a_command_is_the_projects_test_command() -> None:
    assert unlisted(None, tool="run_tests", plain=False) == "" and unlisted(None, plain=False) != ""
    assert "no box" in unlisted(None, tool="run_tests")


def _text(body: str):  # type: ignore[no-untyped-def]
    return lambda path: body


def test_a_script_runs_unasked_only_in_a_box() -> None:
    ok = "import json\nprint(json.dumps([1]))\n"
    assert unlisted("python3 new.py a b", written={"new.py"}, plain=False, read_text=_text(ok)) == ""
    assert unlisted("python3 report.py", written=set(), plain=False, read_text=_text(ok)) == ""
    # in the box the kernel decides, not a reading of the text: what the script did to the
    # workspace is shown afterwards (companion/effectscheck.py)
    bad = "import shutil\nshutil.rmtree('src')\n"
    assert unlisted("python3 new.py", written={"new.py"}, plain=False, read_text=_text(bad)) == ""
    assert unlisted("python3 ../x.py", plain=False, read_text=_text(ok)) != ""


def test_without_a_box_no_code_runs_unasked_whoever_wrote_it_and_whatever_it_imports() -> None:
    """Reading a script for network imports is a deny-list (the model writes the script):
    with no box, a new offline script, a check of a module and the tests all wait."""
    files = {"new.py": "print(1)\n", "m.py": "def f(x):\n    return x * 2\n",
             "tests/test_x.py": "def test_x():\n    assert True\n"}
    for command in ("python3 new.py", 'python3 -c "import m; print(m.f(2))"', "pytest -q"):
        why = unlisted(command, written=set(files), plain=True, read_text=files.get)
        assert "no box" in why, command
    assert "no box" in unlisted(None, tool="run_tests", written=set(files), plain=True, read_text=files.get)


def test_a_function_call_check_is_judged_as_its_module() -> None:
    """The loop's check `python3 -c "import m; print(m.f(2))"` runs unasked in a box as
    `python3 m.py` would; any other code in `-c` waits."""
    texts = {"m.py": "def f(x):\n    return x * 2\n"}
    check = 'python3 -c "import m; print(m.f(2))"'
    assert unlisted(check, written={"m.py"}, plain=False, read_text=texts.get) == ""
    assert unlisted('python3 -c "import m; m.f(2)"', written={"m.py"}, plain=False, read_text=texts.get) != ""
    assert unlisted("python3 -c \"import shutil; print(shutil.rmtree('src'))\"", written={"m.py"},
                    plain=False, read_text=texts.get) != ""  # not a call check: inline code
