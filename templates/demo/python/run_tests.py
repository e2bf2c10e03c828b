"""Run the demo's unittest suite with the standard library only and write
a JUnit XML report, for machines that have Python but not pytest.

`wfx demo` names this as the test command (`test.command`) and the report
(`test.junit`) in .workflow/wfx.json; with pytest installed the demo uses
pytest instead. Usage: python3 .workflow/demo/run_tests.py
"""

import inspect
import os
import sys
import time
import traceback
import unittest
from xml.sax.saxutils import quoteattr, escape

ROOT = os.getcwd()
REPORT = os.path.join(ROOT, ".workflow", "demo", "junit", "unittest.xml")


class Collect(unittest.TextTestResult):
    """unittest's verbose text output, plus one record per test."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = []
        self._started = 0.0

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def _record(self, test, status, detail=""):
        self.records.append((test, status, detail, time.monotonic() - self._started))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failure", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)


def location(test):
    """(file relative to the root, line) of a test method."""
    method = getattr(test, test._testMethodName, None)
    try:
        path = inspect.getsourcefile(method)
        line = inspect.getsourcelines(method)[1]
    except (TypeError, OSError):
        return None, None
    return os.path.relpath(path, ROOT), line


def junit(records):
    failures = sum(1 for r in records if r[1] == "failure")
    errors = sum(1 for r in records if r[1] == "error")
    skipped = sum(1 for r in records if r[1] == "skipped")
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<testsuites><testsuite name="unittest" tests="{len(records)}" '
        f'failures="{failures}" errors="{errors}" skipped="{skipped}">',
    ]
    for test, status, detail, seconds in records:
        classname = f"{type(test).__module__}.{type(test).__qualname__}"
        attrs = f"classname={quoteattr(classname)} name={quoteattr(test._testMethodName)}"
        path, line = location(test)
        if path:
            attrs += f" file={quoteattr(path)} line=\"{line}\""
        attrs += f' time="{seconds:.3f}"'
        if status == "passed":
            out.append(f"<testcase {attrs}/>")
            continue
        tag = {"failure": "failure", "error": "error", "skipped": "skipped"}[status]
        # The exception line first, then the traceback: readers (and
        # wfx) take a failure's first line as its error.
        last = detail.strip().splitlines()[-1] if detail.strip() else status
        body = detail if status == "skipped" else f"{last}\n\n{detail}"
        out.append(
            f"<testcase {attrs}><{tag} message={quoteattr(last)}>"
            f"{escape(body)}</{tag}></testcase>"
        )
    out.append("</testsuite></testsuites>")
    return "\n".join(out) + "\n"


def main():
    sys.path.insert(0, ROOT)
    suite = unittest.defaultTestLoader.discover("tests", top_level_dir="tests")
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=Collect)
    result = runner.run(suite)
    os.makedirs(os.path.dirname(REPORT), exist_ok=True)
    with open(REPORT, "w", encoding="utf-8") as f:
        f.write(junit(result.records))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
