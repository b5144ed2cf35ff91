"""`bench everyday`'s tasks: everyday jobs nobody tuned the loop on, each with a hidden check.

Written the way a person asks (no "run it", no file to write named for a fix, values stated only
where a person would state them): a module with a bug, a script to extend with an option, a data
file to count or summarise, a function to add with a stated value, code that must stay quiet on
import. Each check is Python run with `python3 -c` in the workspace after the run (exit 0 = the
task is done); it judges the result by running it, never by reading the model's words.
"""

from __future__ import annotations

from benchmarks._compliance_tasks import Task, _fn, _pytest, _run


def _quiet(module: str, *asserts: str) -> str:
    """A check: importing `module` prints nothing, and its functions give these values."""
    body = "\n".join(f"assert {a}, {a!r}" for a in asserts)
    return ("import subprocess, sys\n"
            f"r = subprocess.run([sys.executable, '-c', 'import {module}'], capture_output=True, text=True, timeout=10)\n"
            "assert r.returncode == 0, r.stderr\nassert r.stdout.strip() == '', 'prints on import: ' + r.stdout\n"
            f"sys.path.insert(0, '.')\nimport {module} as m\n{body}\n")


def _env(module: str, env: dict[str, str], expr: str) -> str:
    """A check: with exactly `env` (no other of its keys), `expr` on the imported module holds."""
    return ("import os, subprocess, sys\n"
            f"e = {{k: v for k, v in os.environ.items() if k not in {sorted(env)!r} + ['PORT', 'HOST']}}\n"
            f"e.update({env!r})\n"
            f"r = subprocess.run([sys.executable, '-c', 'import {module} as m; assert {expr}, repr(vars(m))'],"
            " capture_output=True, text=True, timeout=10, env=e)\nassert r.returncode == 0, r.stderr[-400:]\n")


EXPENSES = "date,item,amount\n2024-03-01,coffee,3.50\n2024-03-02,books,24.00\n2024-03-02,lunch,12.25\n" \
           "2024-03-04,train,8.75\n2024-03-05,coffee,3.50\n"
APP_LOG = ("2024-05-01 10:00:01 INFO server started\n2024-05-01 10:00:05 INFO listening on 8080\n"
           "2024-05-01 10:01:12 WARNING slow request /api/items\n2024-05-01 10:02:30 ERROR database timeout\n"
           "2024-05-01 10:02:31 INFO retrying\n2024-05-01 10:02:40 ERROR database timeout\n"
           "2024-05-01 10:03:00 INFO request /api/items\n2024-05-01 10:04:10 WARNING disk 91% full\n"
           "2024-05-01 10:05:00 INFO request /health\n")
STORY = ("the fox saw the dog and the dog saw the fox\nthe cat sat on a mat\n"
         "a dog and a cat and a fox\n")
SHOW = ("import argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('path')\n"
        "    args = parser.parse_args()\n    with open(args.path) as f:\n        for line in f:\n"
        "            print(line.rstrip('\\n'))\n\n\nif __name__ == '__main__':\n    main()\n")
CONFIG_TXT = "# settings\nname = demo\n\n# the port\nport = 8080\n"

EVERYDAY: tuple[Task, ...] = (
    Task("e_median", "The median function in numstats.py returns the wrong value for lists with an even "
         "number of items. Fix it.",
         _fn("numstats", "m.median([1, 2, 3, 4]) == 2.5", "m.median([3, 1, 2]) == 2", "m.median([5]) == 5",
             "m.median([4, 1, 3, 2, 6, 5]) == 3.5", "m.spread([1, 5, 3]) == 4"), (),
         {"numstats.py": "def median(xs):\n    s = sorted(xs)\n    return s[len(s) // 2]\n\n\n"
                         "def spread(xs):\n    return max(xs) - min(xs)\n"}),
    Task("e_total", "Write total.py that prints the total of the amount column in expenses.csv.",
         _run("total.py", "import re\nassert [float(n) for n in re.findall(r'\\d+(?:\\.\\d+)?', out)][-1:] == [52.0], out"),
         (), {"expenses.csv": EXPENSES}),
    Task("e_skip_comments", "Add a --skip-comments flag to show.py: with it, lines that start with # are not "
         "printed.",
         _run("show.py", "assert out.splitlines() == ['name = demo', '', 'port = 8080'], out",
              "settings.txt", "--skip-comments")
         + "r = subprocess.run([sys.executable, 'show.py', 'settings.txt'], capture_output=True, text=True, timeout=10)\n"
           "assert r.stdout.splitlines() == open('settings.txt').read().splitlines(), r.stdout\n",
         (), {"show.py": SHOW, "settings.txt": CONFIG_TXT}),
    Task("e_parse_size", "Add a function parse_size(text) to units.py that turns sizes like '512B', '2KB' or "
         "'3MB' into a number of bytes (1KB is 1024 bytes).",
         _fn("units", "m.parse_size('512B') == 512", "m.parse_size('2KB') == 2048",
             "m.parse_size('3MB') == 3 * 1024 * 1024", "m.to_kb(2048) == 2"), (),
         {"units.py": "def to_kb(n_bytes):\n    return n_bytes / 1024\n"}),
    Task("e_levels", "Write levels.py that reads app.log and prints how many lines of each level (INFO, "
         "WARNING, ERROR) it has, one line per level like 'INFO: 3'.",
         _run("levels.py", "import re\ngot = dict(re.findall(r'(INFO|WARNING|ERROR)\\W+(\\d+)', out))\n"
              "assert got == {'INFO': '5', 'WARNING': '2', 'ERROR': '2'}, out"),
         (), {"app.log": APP_LOG}),
    Task("e_quiet", "Importing greetings.py prints things, because the demo at its bottom always runs. "
         "Make the demo run only when greetings.py is run as a script.",
         _quiet("greetings", "m.hello('Ann') == 'Hello, Ann!'")
         + "r = subprocess.run([sys.executable, 'greetings.py'], capture_output=True, text=True, timeout=10)\n"
           "assert 'Hello, World!' in r.stdout, r.stdout\n",
         (), {"greetings.py": "def hello(name):\n    return f'Hello, {name}!'\n\n\nprint('greetings loaded')\n"
                              "print(hello('World'))\n"}),
    Task("e_titlecase", "titlecase('hello big world') in text_utils.py should return 'Hello Big World', but it "
         "returns 'Hello big world'. Fix it.",
         _fn("text_utils", "m.titlecase('hello big world') == 'Hello Big World'", "m.titlecase('a') == 'A'",
             "m.shout('hi') == 'HI!'"), (),
         {"text_utils.py": "def titlecase(s):\n    return s.capitalize()\n\n\ndef shout(s):\n    return s.upper() + '!'\n"}),
    Task("e_unique", "Add a function unique(items) to listtools.py that returns the items without duplicates, "
         "keeping the order in which they first appear.",
         _fn("listtools", "m.unique([3, 1, 3, 2, 1]) == [3, 1, 2]", "m.unique([]) == []",
             "m.unique(['b', 'a', 'b']) == ['b', 'a']", "m.first([7, 8]) == 7"), (),
         {"listtools.py": "def first(items):\n    return items[0]\n"}),
    Task("e_linecount", "Write nonempty.py that takes a file name as its argument and prints how many "
         "non-empty lines the file has.",
         _run("nonempty.py", "import re\nassert re.findall(r'\\d+', out) == ['3'], out", "settings.txt")
         + "r = subprocess.run([sys.executable, 'nonempty.py', 'app.log'], capture_output=True, text=True, timeout=10)\n"
           "assert re.findall(r'\\d+', r.stdout) == ['9'], r.stdout\n",
         (), {"settings.txt": CONFIG_TXT.replace("# the port\n", ""), "app.log": APP_LOG}),
    Task("e_discount", "In prices.py, apply_discount(80, 25) should give 60 (25 percent off), but it "
         "doesn't. Fix it.",
         _fn("prices", "m.apply_discount(80, 25) == 60", "m.apply_discount(100, 10) == 90",
             "m.apply_discount(50, 0) == 50", "m.with_tax(100) == 120"), (),
         {"prices.py": "def apply_discount(price, percent):\n    return price - percent / 100\n\n\n"
                       "def with_tax(price):\n    return price * 1.2\n"}),
    Task("e_top_words", "Write top_words.py that prints the three most common words in story.txt with how "
         "often each appears, most common first.",
         _run("top_words.py", "import collections, re\nc = collections.Counter(open('story.txt').read().split())\n"
              "pairs = [(w, int(n)) for w, n in re.findall(r'([a-z]+)\\W+(\\d+)', out)][:3]\n"
              "assert len(pairs) == 3 and all(c[w] == n for w, n in pairs), out\n"
              "assert [n for _, n in pairs] == [n for _, n in c.most_common(3)], out"),
         (), {"story.txt": STORY}),
    Task("e_port_default", "config.py crashes when the PORT environment variable is not set. Make it use "
         "8080 then.",
         _env("config", {}, "m.PORT == 8080") + _env("config", {"PORT": "9000"}, "m.PORT == 9000"), (),
         {"config.py": "import os\n\nHOST = os.environ.get('HOST', 'localhost')\nPORT = int(os.environ['PORT'])\n"}),
)

# an earlier set (formerly scripts/everyday_tasks.py; its figures are in docs/benchmarks.md, "Everyday
# tasks", issue 24) without its Japanese request, which `bench compliance` runs as h_japanese:
# `bench everyday --set earlier`
SLUG_TEST = "from slug import slugify\n\n\ndef test_spaces():\n    assert slugify('Hello World') == 'hello-world'\n"
EARLIER: tuple[Task, ...] = (
    Task("fix_bug", "Fix the bug in stats.py: average([2, 4]) should return 3.",
         _fn("stats", "m.average([2, 4]) == 3", "m.average([1, 2, 3]) == 2"), (),
         {"stats.py": "def average(xs):\n    return sum(xs) / (len(xs) + 1)\n"}),
    Task("add_flag", "Add a --name option to greet.py so that `python3 greet.py --name Ann` prints Hello, Ann!",
         _run("greet.py", "assert out.strip() == 'Hello, Ann!', out", "--name", "Ann")
         + "r = subprocess.run([sys.executable, 'greet.py'], capture_output=True, text=True, timeout=10)\n"
           "assert 'hello, world' in r.stdout.lower(), r.stdout\n",
         (), {"greet.py": "def main():\n    print('Hello, World!')\n\n\nif __name__ == '__main__':\n    main()\n"}),
    Task("rename", "Rename the function calc_total to compute_total in shop.py and in main.py.",
         _run("main.py", "assert out.strip() == '6', out")
         + "src = open('shop.py').read() + open('main.py').read()\n"
           "assert 'def compute_total' in src and 'calc_total' not in src, src\n",
         (), {"shop.py": "def calc_total(prices):\n    return sum(prices)\n",
              "main.py": "from shop import calc_total\n\nprint(calc_total([1, 2, 3]))\n"}),
    Task("csv_total", "Write total.py that prints the sum of the amount column in sales.csv.",
         _run("total.py", "assert out.strip() in ('12', '12.0'), out"), (),
         {"sales.csv": "item,amount\napple,3\npear,4\nplum,5\n"}),
    Task("count_words", "Create words.py with a function count_words(text) that returns the number of words in text.",
         _fn("words", "m.count_words('a b  c') == 3", "m.count_words('') == 0"), (), {}),
    Task("fix_test", "The test in test_slug.py fails. Fix slug.py so that it passes.",
         f"open('test_slug.py', 'w').write({SLUG_TEST!r})\n" + _pytest("test_slug.py"), (),
         {"slug.py": "def slugify(text):\n    return text.lower()\n", "test_slug.py": SLUG_TEST}),
)
SETS: dict[str, tuple[Task, ...]] = {"new": EVERYDAY, "earlier": EARLIER, "all": EVERYDAY + EARLIER}

# a right answer for every task (tests/bench/test_everyday.py: each check passes on it and fails
# on the workspace as it starts)
ANSWERS: dict[str, dict[str, str]] = {
    "e_median": {"numstats.py": "def median(xs):\n    s = sorted(xs)\n    n = len(s)\n    if n % 2:\n"
                                "        return s[n // 2]\n    return (s[n // 2 - 1] + s[n // 2]) / 2\n\n\n"
                                "def spread(xs):\n    return max(xs) - min(xs)\n"},
    "e_total": {"total.py": "import csv\nprint(sum(float(r['amount']) for r in csv.DictReader(open('expenses.csv'))))\n"},
    "e_skip_comments": {"show.py": SHOW.replace("    parser.add_argument('path')\n",
                                                "    parser.add_argument('path')\n    parser.add_argument('--skip-comments', "
                                                "action='store_true')\n")
                        .replace("            print(", "            if args.skip_comments and line.startswith('#'):\n"
                                 "                continue\n            print(")},
    "e_parse_size": {"units.py": "def to_kb(n_bytes):\n    return n_bytes / 1024\n\n\ndef parse_size(text):\n"
                                 "    for unit, f in (('KB', 1024), ('MB', 1024 ** 2), ('B', 1)):\n"
                                 "        if text.endswith(unit):\n            return int(text[:-len(unit)]) * f\n"},
    "e_levels": {"levels.py": "from collections import Counter\nc = Counter(l.split()[2] for l in open('app.log'))\n"
                              "for k in ('INFO', 'WARNING', 'ERROR'):\n    print(f'{k}: {c[k]}')\n"},
    "e_quiet": {"greetings.py": "def hello(name):\n    return f'Hello, {name}!'\n\n\nif __name__ == '__main__':\n"
                                "    print('greetings loaded')\n    print(hello('World'))\n"},
    "e_titlecase": {"text_utils.py": "def titlecase(s):\n    return s.title()\n\n\ndef shout(s):\n    return s.upper() + '!'\n"},
    "e_unique": {"listtools.py": "def first(items):\n    return items[0]\n\n\ndef unique(items):\n"
                                 "    return list(dict.fromkeys(items))\n"},
    "e_linecount": {"nonempty.py": "import sys\nprint(sum(1 for l in open(sys.argv[1]) if l.strip()))\n"},
    "e_discount": {"prices.py": "def apply_discount(price, percent):\n    return price * (100 - percent) / 100\n\n\n"
                                "def with_tax(price):\n    return price * 1.2\n"},
    "e_top_words": {"top_words.py": "from collections import Counter\n"
                                    "for w, n in Counter(open('story.txt').read().split()).most_common(3):\n"
                                    "    print(w, n)\n"},
    "e_port_default": {"config.py": "import os\n\nHOST = os.environ.get('HOST', 'localhost')\n"
                                    "PORT = int(os.environ.get('PORT', 8080))\n"},
    "fix_bug": {"stats.py": "def average(xs):\n    return sum(xs) / len(xs)\n"},
    "add_flag": {"greet.py": "import argparse\n\n\ndef main():\n    p = argparse.ArgumentParser()\n"
                             "    p.add_argument('--name', default='World')\n"
                             "    print(f'Hello, {p.parse_args().name}!')\n\n\nif __name__ == '__main__':\n    main()\n"},
    "rename": {"shop.py": "def compute_total(prices):\n    return sum(prices)\n",
               "main.py": "from shop import compute_total\n\nprint(compute_total([1, 2, 3]))\n"},
    "csv_total": {"total.py": "import csv\nprint(sum(int(r['amount']) for r in csv.DictReader(open('sales.csv'))))\n"},
    "count_words": {"words.py": "def count_words(text):\n    return len(text.split())\n"},
    "fix_test": {"slug.py": "def slugify(text):\n    return '-'.join(text.lower().split())\n"},
}
