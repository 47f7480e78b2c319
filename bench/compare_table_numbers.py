"""Compare two `bench/fixture_outputs.py` folders when only the tables' presentation may change.

    .venv/bin/python bench/compare_table_numbers.py BEFORE AFTER

Files other than LaTeX (the CSVs, exports, notes) must be byte for byte the same; a LaTeX table
may change its layout, captions and headers, but the numbers in its body rows (row headers
included, as a multiset: a table may be transposed or split) must not change. Prints each
difference and a summary; exits 1 on any.
"""

import re
import sys
from collections import Counter
from pathlib import Path

NUMBER = re.compile(r"(?<![A-Za-z])-?\d+(?:\.\d+)?")  # "F1" is a name, not a number
TABLE = re.compile(r"\\begin\{(?:table|sidewaystable|longtable)\}")


def body_numbers(tex: str) -> Counter:
    numbers = Counter()
    for part in TABLE.split(tex)[1:]:
        if "\\endlastfoot" in part:
            body = part.split("\\endlastfoot", 1)[1].split("\\end{longtable}", 1)[0]
        else:
            body = part.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
        numbers.update(NUMBER.findall(body))
    return numbers


def main(before: Path, after: Path) -> int:
    old_files = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    new_files = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    problems = [f"only before: {p}" for p in sorted(old_files - new_files)]
    problems += [f"only after: {p}" for p in sorted(new_files - old_files)]
    same = 0
    for path in sorted(old_files & new_files):
        old, new = (before / path).read_bytes(), (after / path).read_bytes()
        if path.suffix != ".tex":
            problem = None if old == new else f"different: {path}"
        else:
            old_numbers, new_numbers = body_numbers(old.decode()), body_numbers(new.decode())
            removed, added = dict(old_numbers - new_numbers), dict(new_numbers - old_numbers)
            problem = f"numbers differ in {path}: removed {removed}, added {added}" if removed or added else None
        problems += [problem] if problem else []
        same += problem is None
    print("\n".join(problems))
    print(f"{same} of {len(old_files & new_files)} files alike; {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
