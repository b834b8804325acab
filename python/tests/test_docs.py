"""The Python sessions of the documentation run: every ```python block of
README.md and docs/ that is a `>>>` session is run as a doctest with the
installed wheel and ommx 2.9.3, and must print what the page shows."""

import doctest
import re

import pytest

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def sessions():
    """(page, line of the block's first line, the block's text)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^```python\n(.*?)^```", text, re.M | re.S):
            if block.group(1).lstrip().startswith(">>>"):
                line = text.count("\n", 0, block.start(1)) + 1
                found.append((page, line, block.group(1)))
    return found


SESSIONS = sessions()


def marked(text: str) -> str:
    """The session with doctest's `<BLANKLINE>` for each blank line inside an
    example's output (the pages show output as it prints); a blank line
    before the next `>>>` or the end only separates."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        following = [later for later in lines[i + 1 :] if later]
        if not line and following and not following[0].startswith(">>>"):
            line = "<BLANKLINE>"
        out.append(line)
    return "\n".join(out)


class Checker(doctest.OutputChecker):
    """Doctest's comparison, blind to blank lines at the end (`print` of a
    text that ends with a newline prints one)."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        want, got = want.rstrip("\n") + "\n", got.rstrip("\n") + "\n"
        return super().check_output(want, got, optionflags)


def test_the_pages_hold_a_session():
    assert {page.name for page, _, _ in SESSIONS} >= {"python.md"}


@pytest.mark.parametrize(
    "page, line, text", SESSIONS, ids=[f"{p.name}:{line}" for p, line, _ in SESSIONS]
)
def test_a_session_prints_what_its_page_shows(page, line, text):
    name = f"{page.relative_to(REPO)}:{line}"
    test = doctest.DocTestParser().get_doctest(marked(text), {}, name, str(page), line - 1)
    report = []
    runner = doctest.DocTestRunner(checker=Checker(), optionflags=doctest.ELLIPSIS)
    result = runner.run(test, out=report.append)
    assert test.examples, name
    assert result.failed == 0, "".join(report)
