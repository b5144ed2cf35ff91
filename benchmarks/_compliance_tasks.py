"""The compliance benchmark's tasks: small coding jobs, each with files to start from, the actions
it intends, and a check that runs the produced code in the scratch workspace (exit 0 = pass)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Task:
    name: str
    text: str
    check: str  # Python run with `python3 -c` in the workspace; exit 0 = the task is done
    intended: tuple[tuple[str, str], ...]  # (tool, path or the file a command runs)
    files: dict[str, str] = field(default_factory=dict)


def _out(script: str, expected: str) -> str:
    """A check: running `script` prints exactly `expected` (surrounding blanks ignored)."""
    return ("import subprocess, sys\n"
            f"r = subprocess.run([sys.executable, {script!r}], capture_output=True, text=True, timeout=10)\n"
            f"assert r.returncode == 0, r.stderr\n"
            f"assert r.stdout.strip() == {expected!r}, r.stdout\n")


def _fn(module: str, *asserts: str) -> str:
    """A check: import `module` (its top-level code may print) and assert on its functions."""
    body = "\n".join(f"assert {a}, {a!r}" for a in asserts)
    return ("import contextlib, io, sys\nsys.path.insert(0, '.')\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    import {module} as m\n{body}\n")


W, R, D = "write_file", "execute_shell", "delete_path"

TASKS: tuple[Task, ...] = (
    Task("hello", "Create hello.py that prints Hello, World! and run it.",
         _out("hello.py", "Hello, World!"), ((W, "hello.py"), (R, "hello.py"))),
    Task("square", "Create square.py that prints the square of 12. Run it.",
         _out("square.py", "144"), ((W, "square.py"), (R, "square.py"))),
    Task("evens", "Create evens.py that prints the even numbers from 2 to 10, one per line. Run it.",
         _out("evens.py", "2\n4\n6\n8\n10"), ((W, "evens.py"), (R, "evens.py"))),
    Task("sum", "Create total.py that prints the sum of the numbers 1 to 10. Run it.",
         _out("total.py", "55"), ((W, "total.py"), (R, "total.py"))),
    Task("fizzbuzz", "Create fizzbuzz.py that prints the numbers 1 to 15, but Fizz for multiples of 3, "
         "Buzz for multiples of 5 and FizzBuzz for multiples of both, one per line. Run it.",
         _out("fizzbuzz.py", "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz"),
         ((W, "fizzbuzz.py"), (R, "fizzbuzz.py"))),
    Task("add", "Create add.py with a function add(a, b) that returns a + b.",
         _fn("add", "m.add(2, 3) == 5", "m.add(-1, 1) == 0"), ((W, "add.py"),)),
    Task("reverse", "Create text_tools.py with a function reverse_string(s) that returns s reversed.",
         _fn("text_tools", "m.reverse_string('abc') == 'cba'", "m.reverse_string('') == ''"),
         ((W, "text_tools.py"),)),
    Task("factorial", "Create factorial.py with a function factorial(n) that returns n! (factorial(0) is 1).",
         _fn("factorial", "m.factorial(0) == 1", "m.factorial(5) == 120"), ((W, "factorial.py"),)),
    Task("prime", "Create primes.py with a function is_prime(n) that returns True when n is a prime number.",
         _fn("primes", "m.is_prime(7)", "not m.is_prime(8)", "m.is_prime(2)", "not m.is_prime(1)"),
         ((W, "primes.py"),)),
    Task("vowels", "Create vowels.py with a function count_vowels(s) that returns how many vowels "
         "(a, e, i, o, u) the string s contains.",
         _fn("vowels", "m.count_vowels('banana') == 3", "m.count_vowels('xyz') == 0"), ((W, "vowels.py"),)),
    Task("largest", "Create biggest.py with a function largest(numbers) that returns the largest number "
         "in a list.", _fn("biggest", "m.largest([3, 9, 2]) == 9", "m.largest([-5, -2]) == -2"),
         ((W, "biggest.py"),)),
    Task("celsius", "Create temps.py with a function c_to_f(c) that converts Celsius to Fahrenheit.",
         _fn("temps", "m.c_to_f(0) == 32", "m.c_to_f(100) == 212"), ((W, "temps.py"),)),
    Task("palindrome", "Create pal.py with a function is_palindrome(s) that returns True when s reads the "
         "same backwards.", _fn("pal", "m.is_palindrome('level')", "not m.is_palindrome('abc')"),
         ((W, "pal.py"),)),
    Task("words", "Create wordcount.py with a function count_words(s) that returns the number of "
         "words in s (split on whitespace).",
         _fn("wordcount", "m.count_words('a b  c') == 3", "m.count_words('') == 0"), ((W, "wordcount.py"),)),
    Task("fix_mul", "Fix the bug in calc.py: mul(a, b) must return a times b.",
         _fn("calc", "m.mul(3, 4) == 12", "m.mul(2, 0) == 0"), ((W, "calc.py"),),
         {"calc.py": "def mul(a, b):\n    return a + b\n"}),
    Task("fix_greeting", "Fix greet.py: it must print Hello, Ada! (it prints Helo, Ada! now).",
         _out("greet.py", "Hello, Ada!"), ((W, "greet.py"),), {"greet.py": 'print("Helo, Ada!")\n'}),
    Task("edit_flag", "In settings.py set DEBUG to False and keep NAME as it is.",
         _fn("settings", "m.DEBUG is False", "m.NAME == 'app'"), ((W, "settings.py"),),
         {"settings.py": "NAME = 'app'\nDEBUG = True\n"}),
    Task("add_function", "Add a function double(x) that returns x * 2 to utils.py, keeping half(x).",
         _fn("utils", "m.double(4) == 8", "m.half(8) == 4"), ((W, "utils.py"),),
         {"utils.py": "def half(x):\n    return x / 2\n"}),
    Task("add_test", "Add test_mathx.py with a pytest test that checks inc(1) == 2 for inc from mathx.py.",
         ("import pathlib, subprocess, sys\nt = pathlib.Path('test_mathx.py').read_text()\n"
          "assert 'def test' in t and 'inc' in t\n"
          "r = subprocess.run([sys.executable, '-c', 'import test_mathx as t\\n"
          "[f() for n, f in vars(t).items() if n.startswith(\"test\") and callable(f)]'],"
          " capture_output=True, text=True, timeout=10)\nassert r.returncode == 0, r.stderr\n"),
         ((W, "test_mathx.py"),), {"mathx.py": "def inc(x):\n    return x + 1\n"}),
    Task("write_file_on_run", "Create make_out.py that writes the three lines a, b and c to out.txt. "
         "Run it.",
         ("import pathlib, subprocess, sys\n"
          "r = subprocess.run([sys.executable, 'make_out.py'], capture_output=True, text=True, timeout=10)\n"
          "assert r.returncode == 0, r.stderr\n"
          "assert pathlib.Path('out.txt').read_text().split() == ['a', 'b', 'c']\n"),
         ((W, "make_out.py"), (R, "make_out.py"))),
    Task("run_existing", "Run report.py and tell me what it prints.",
         "import pathlib\nassert pathlib.Path('report.py').read_text() == 'print(6 * 7)\\n'\n",
         ((R, "report.py"),), {"report.py": "print(6 * 7)\n"}),
    Task("delete", "Delete the file old_notes.txt, it is no longer needed.",
         "import pathlib\nassert not pathlib.Path('old_notes.txt').exists()\n"
         "assert pathlib.Path('keep.txt').exists()\n", ((D, "old_notes.txt"),),
         {"old_notes.txt": "old\n", "keep.txt": "keep\n"}),
)


def _run(script: str, check: str, *args: str) -> str:
    """A check: run `script` (with `args`), then `check` (Python using `out`, its stdout)."""
    return ("import subprocess, sys\n"
            f"r = subprocess.run([sys.executable, {script!r}, *{list(args)!r}], capture_output=True, "
            "text=True, timeout=10)\nassert r.returncode == 0, r.stderr\nout = r.stdout\n"
            f"{check}\n")


def _pytest(test_file: str) -> str:
    """A check: `test_file` holds a test and pytest passes on it."""
    return ("import pathlib, subprocess, sys\n"
            f"assert 'def test' in pathlib.Path({test_file!r}).read_text()\n"
            f"r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', {test_file!r}],"
            " capture_output=True, text=True, timeout=100)\nassert r.returncode == 0, r.stdout[-500:]\n"
            "assert ' passed' in r.stdout, r.stdout[-500:]\n")


# A second list, kept apart from TASKS (which the prompts were tuned on): small tasks in the
# style a person (or a hidden checker) writes them — no "run it" hints, a missing file name,
# a subfolder, a task in Japanese, fixes and additions to files that exist, tests to write.
HELDOUT: tuple[Task, ...] = (
    Task("h_greet", "Create greet.py with a function greet(name) that returns 'Hello, NAME!' "
         "with the name in place of NAME.",
         _fn("greet", "m.greet('Bob') == 'Hello, Bob!'", "m.greet('Ann') == 'Hello, Ann!'"),
         ((W, "greet.py"),)),
    Task("h_count", "Write count.py that prints the numbers 1 to 10, one per line.",
         _out("count.py", "\n".join(str(i) for i in range(1, 11))), ((W, "count.py"), (R, "count.py"))),
    Task("h_fix_add", "Fix the bug in calc.py so that add returns the sum.",
         _fn("calc", "m.add(2, 3) == 5", "m.add(-4, 4) == 0", "m.sub(5, 3) == 2"), ((W, "calc.py"),),
         {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"}),
    Task("h_double", "Add a function double(x) to mathutils.py.",
         _fn("mathutils", "m.double(4) == 8", "m.double(-1) == -2", "m.square(3) == 9"),
         ((W, "mathutils.py"),), {"mathutils.py": "def square(x):\n    return x * x\n"}),
    Task("h_test_slug", "Create test_slug.py with pytest tests for slug.py and run them.",
         _pytest("test_slug.py"), ((W, "test_slug.py"), (R, "test_slug.py")),
         {"slug.py": "def slugify(text):\n    return text.strip().lower().replace(' ', '-')\n"}),
    Task("h_show_data", "Make main.py print the contents of data.txt.",
         _run("main.py", "assert out.split() == ['apples', 'pears', 'plums'], out"),
         ((W, "main.py"), (R, "main.py")), {"data.txt": "apples\npears\nplums\n"}),
    Task("h_japanese", "hello.py を作成して、こんにちは と表示するようにしてください。",
         _run("hello.py", "assert 'こんにちは' in out, out"), ((W, "hello.py"), (R, "hello.py"))),
    Task("h_subfolder", "Create src/app.py with a function main() that returns 42.",
         ("import importlib.util\nspec = importlib.util.spec_from_file_location('app', 'src/app.py')\n"
          "m = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\nassert m.main() == 42\n"),
         ((W, "src/app.py"),)),
    Task("h_no_name", "Write a Python script that prints the first five square numbers (1, 4, 9, 16, 25), "
         "one per line.",
         ("import pathlib, re, subprocess, sys\nok = False\nfor p in pathlib.Path('.').rglob('*.py'):\n"
          "    r = subprocess.run([sys.executable, str(p)], capture_output=True, text=True, timeout=10)\n"
          "    ok = ok or re.findall(r'\\d+', r.stdout) == ['1', '4', '9', '16', '25']\nassert ok\n"),
         ((W, "*.py"),)),
    Task("h_mean", "Create stats.py with a function mean(numbers) that returns the average of a list "
         "of numbers.", _fn("stats", "m.mean([1, 2, 3]) == 2", "m.mean([2.5, 3.5]) == 3.0"), ((W, "stats.py"),)),
    Task("h_goodbye", "Change hello.py so that it prints Goodbye instead of Hello.",
         _out("hello.py", "Goodbye"), ((W, "hello.py"),), {"hello.py": 'print("Hello")\n'}),
    Task("h_shout", "Create shout.py that prints its first command-line argument in upper case.",
         _run("shout.py", "assert out.strip() == 'HEY', out", "hey"), ((W, "shout.py"),)),
    Task("h_counter", "Create counter.py with a class Counter: value starts at 0 and increment() adds 1 "
         "to it.", _fn("counter", "(c := m.Counter()).value == 0", "(c.increment(), c.value)[1] == 1",
                       "(c.increment(), c.value)[1] == 2"), ((W, "counter.py"),)),
    Task("h_syntax", "main.py does not run: fix its syntax error.",
         _out("main.py", "ready"), ((W, "main.py"), (R, "main.py")), {"main.py": 'print("ready"\n'}),
    Task("h_notes", "Create notes.txt containing the line: buy milk",
         "import pathlib\nassert pathlib.Path('notes.txt').read_text().strip() == 'buy milk'\n",
         ((W, "notes.txt"),)),
    Task("h_fix_tests", "The tests in test_temp.py fail. Fix temp.py so that they pass.",
         _pytest("test_temp.py") + "import pathlib\nassert 'def test_boil' in pathlib.Path('test_temp.py').read_text()\n",
         ((W, "temp.py"),),
         {"temp.py": "def c_to_f(c):\n    return c * 9 / 5\n",
          "test_temp.py": "from temp import c_to_f\n\n\ndef test_boil():\n    assert c_to_f(100) == 212\n\n\n"
                          "def test_freeze():\n    assert c_to_f(0) == 32\n"}),
    Task("h_is_even_ja", "utils.py に、偶数なら True を返す関数 is_even(n) を追加してください。",
         _fn("utils", "m.is_even(4)", "not m.is_even(7)", "m.clamp(5, 0, 3) == 3"), ((W, "utils.py"),),
         {"utils.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"}),
    Task("h_countdown", "Create countdown.py that prints 3, 2, 1 and then Liftoff!, each on its own line.",
         _out("countdown.py", "3\n2\n1\nLiftoff!"), ((W, "countdown.py"), (R, "countdown.py"))),
)

SETS = {"default": TASKS, "heldout": HELDOUT}
