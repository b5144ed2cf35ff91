"""Everyday tasks as a person gives them: `duckflow run TASK -w DIR --model M --auto-approve-workspace`
in a fresh folder each, then the result checked by running it (not by what the run said).

Seven tasks nobody tuned for: fix a bug, add a --name option, rename a function across two files,
a Japanese request, a CSV total, a new function, code fixed to pass its test. Each line printed is
one task (pass, exit code, whether the run said "Done", wall seconds, the folder); the last line
counts passes, "Done" said on a result that fails its check, and the median wall time.

Usage: .venv/bin/python scripts/everyday_tasks.py MODEL [TASK ...]   (e.g. local:default)
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DF = [sys.executable, "-m", "duckflow"]
TASKS = {
  "fix_bug": ("Fix the bug in stats.py: average([2, 4]) should return 3.",
              {"stats.py": "def average(xs):\n    return sum(xs) / (len(xs) + 1)\n"},
              "python3 -c 'import stats; assert stats.average([2, 4]) == 3; assert stats.average([1,2,3]) == 2'"),
  "add_flag": ("Add a --name option to greet.py so that `python3 greet.py --name Ann` prints Hello, Ann!",
               {"greet.py": "def main():\n    print('Hello, World!')\n\n\nif __name__ == '__main__':\n    main()\n"},
               "test \"$(python3 greet.py --name Ann)\" = 'Hello, Ann!' && python3 greet.py | grep -qi 'hello, world'"),
  "rename": ("Rename the function calc_total to compute_total in shop.py and in main.py.",
             {"shop.py": "def calc_total(prices):\n    return sum(prices)\n",
              "main.py": "from shop import calc_total\n\nprint(calc_total([1, 2, 3]))\n"},
             "grep -q 'def compute_total' shop.py && ! grep -q calc_total shop.py main.py && test \"$(python3 main.py)\" = 6"),
  "japanese": ("hello.py を作成して、こんにちは と表示するようにしてください。", {},
               "python3 hello.py | grep -q こんにちは"),
  "csv_total": ("Write total.py that prints the sum of the amount column in sales.csv.",
                {"sales.csv": "item,amount\napple,3\npear,4\nplum,5\n"},
                "test \"$(python3 total.py | tr -d '[:space:]')\" = 12 || test \"$(python3 total.py | tr -d '[:space:]')\" = 12.0"),
  "count_words": ("Create words.py with a function count_words(text) that returns the number of words in text.",
                  {}, "python3 -c 'import words; assert words.count_words(\"a b  c\") == 3; assert words.count_words(\"\") == 0'"),
  "fix_test": ("The test in test_slug.py fails. Fix slug.py so that it passes.",
               {"slug.py": "def slugify(text):\n    return text.lower()\n",
                "test_slug.py": "from slug import slugify\n\n\ndef test_spaces():\n    assert slugify('Hello World') == 'hello-world'\n"},
               "python3 -m pytest -q test_slug.py"),
}

def main():
    model = sys.argv[1]
    names = sys.argv[2:] or list(TASKS)
    home = tempfile.mkdtemp(prefix="dfhome-")
    rows = []
    for name in names:
        task, files, check = TASKS[name]
        ws = Path(tempfile.mkdtemp(prefix=f"ev-{name}-"))
        for p, t in files.items():
            (ws / p).write_text(t)
        env = dict(os.environ, DUCKFLOW_HOME=home)
        t0 = time.time()
        r = subprocess.run([*DF, "run", task, "-w", str(ws), "--model", model, "--auto-approve-workspace"],
                           capture_output=True, text=True, env=env, timeout=900)
        wall = time.time() - t0
        ok = subprocess.run(check, shell=True, cwd=ws, capture_output=True, text=True, timeout=60).returncode == 0
        said_done = "Done" in r.stdout
        rows.append({"task": name, "pass": ok, "exit": r.returncode, "said_done": said_done, "wall_s": round(wall, 1), "ws": str(ws)})
        print(json.dumps(rows[-1]), flush=True)
        (ws / ".run-out.txt").write_text(r.stdout + "\n--- stderr\n" + r.stderr)
    p = sum(r["pass"] for r in rows)
    lies = sum(r["said_done"] and not r["pass"] for r in rows)
    print(f"{model}: {p}/{len(rows)} pass; Done said on a failed result: {lies}; median wall "
          f"{sorted(r['wall_s'] for r in rows)[len(rows)//2]} s")


if __name__ == "__main__":
    main()
