"""pdflatex as every test that compiles LaTeX runs it (`compile_latex`), and the marks such a test carries.

`@needs_pdflatex` marks a test `pdflatex` (`make test-fast` leaves those out) and skips it where no TeX
engine is installed (`make system-deps` installs one).
"""

import shutil
import subprocess

import pytest

_SKIP_WITHOUT_TEX = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine (make system-deps)")
# For a whole module: `pytestmark = PDFLATEX_MARKS`.
PDFLATEX_MARKS = [pytest.mark.pdflatex, _SKIP_WITHOUT_TEX]


def needs_pdflatex(test):
    """The marks of a test that runs pdflatex."""
    return pytest.mark.pdflatex(_SKIP_WITHOUT_TEX(test))


def compile_latex(folder, name) -> str:
    """Compile `folder/<name>.tex` with pdflatex (fails the test with the end of its output if it does not
    compile) and return its log."""
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    return (folder / f"{name}.log").read_text(encoding="utf-8", errors="replace")
