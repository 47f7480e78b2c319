"""The digest a live report keys its reused steps on: equal only for equal values, the same in every process."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from reports.machinery.digests import digest

EXAMPLES = {
    "floats": pd.Series([0.5, np.nan, 2.0], name="bleu"),
    "strings": pd.Series(["qqp", "paws", None], dtype="str", name="corpus"),
    "objects": pd.Series(["a", None, "b"], dtype=object, name="generator"),
    "labels": pd.Series([1, None, 0], dtype="Int64", name="label"),
    "categories": pd.Series(["b", "a", "b"], dtype="category", name="corpus"),
    "frame": pd.DataFrame({"pair_id": ["1", "2"], "label": ["same_meaning", "dont_know"], "n": [1, 2]}),
}


@pytest.mark.parametrize("name", EXAMPLES)
def test_a_digest_is_the_same_in_another_process(name):
    """Object pointers or a process's hash seed must never enter a digest: a restarted worker reuses the steps."""
    code = (
        "import sys; sys.path.insert(0, '.');"
        "from tests.reports.test_memo_digest import EXAMPLES; from reports.machinery.digests import digest;"
        f"print(digest(EXAMPLES[{name!r}]))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other == digest(EXAMPLES[name])


@pytest.mark.parametrize(
    "first, second",
    [
        (["ab", "c"], ["a", "bc"]),  # same text, split elsewhere
        (["a\x00b"], ["a", "b"]),  # a string holding the separator
        (["", ""], [""]),
        (["a", None], ["a", np.nan]),  # missing values of different kinds
        (["a", None], ["a", "None"]),
        (["1"], [1]),
    ],
)
def test_different_values_have_different_digests(first, second):
    assert digest(pd.Series(first, dtype=object)) != digest(pd.Series(second, dtype=object))


def test_values_under_a_mask_do_not_count_but_the_mask_does():
    left = pd.Series([1, None, 3], dtype="Int64")
    right = left.copy()
    right.array._data[1] = 99  # what lies under the mask is not a value
    assert digest(left) == digest(right)
    assert digest(left) != digest(pd.Series([1, 0, 3], dtype="Int64"))


def test_dtype_name_and_index_are_part_of_a_digest():
    values = pd.Series([1.0, 2.0], name="x")
    assert digest(values) != digest(values.rename("y"))
    assert digest(values) != digest(values.astype("float32"))
    assert digest(values) != digest(values.set_axis([5, 6]))
    assert digest(values) != digest(pd.Series([1.0, 2.5], name="x"))


def test_a_known_digest_serves_only_columns_holding_the_same_memory():
    from reports.machinery.digests import Digests

    pairs = pd.DataFrame({"pair_id": pd.Series(["q1", "q2", "q3"], dtype="str"), "edit_distance": [1.0, 2.0, 3.0]})
    digests = Digests()
    for name in pairs.columns:
        digests.know(pairs[name], f"known {name}")
    # The analysis frame is a shallow copy joined with the votes: its pair columns are the pairs' own memory.
    votes = pd.DataFrame({"n": [2]}, index=pd.Index(["q2"], dtype="str"))
    shared = pairs.copy(deep=False).join(votes, on="pair_id")
    assert digests.column(shared["pair_id"]) == "known pair_id"
    assert digests.column(shared["edit_distance"]) == "known edit_distance"
    # A deep copy holds the same numbers elsewhere: hashed, and equal to the digest of the values. (pandas shares an
    # immutable Arrow string column's buffers even in a deep copy: the same memory, rightly served as known.)
    copied = pairs.copy(deep=True)
    assert digests.column(copied["edit_distance"]) == digest(copied["edit_distance"])
    rebuilt = pd.Series(list(pairs["pair_id"]), dtype="str", name="pair_id")
    assert digests.column(rebuilt) == digest(rebuilt)
    # Other values in the same place and shape are told apart (the cache never serves them).
    assert digests.column(pd.Series(["q1", "q2", "q4"], dtype="str", name="pair_id")) != "known pair_id"
    renamed = pairs.rename(columns={"pair_id": "id"})
    assert digests.column(renamed["id"]) == digest(renamed["id"])


def test_a_frame_digest_is_made_of_its_columns_and_tells_frames_apart():
    """A step's part is digested column by column (`Digests.of`): equal frames, equal digests; any change, another."""
    from reports.machinery.digests import Digests

    frame = EXAMPLES["frame"]
    digests = Digests()
    assert digests.of(frame) == Digests().of(frame.copy(deep=True))
    assert digests.of(frame) != digests.of(frame.assign(n=[1, 3]))
    assert digests.of(frame) != digests.of(frame[["label", "pair_id", "n"]])  # column order is part of it
    assert digests.of(frame) != digests.of(frame.set_axis([1, 2]))
    assert digests.of({"a": frame}) != digests.of({"a": frame.assign(n=[2, 2])})  # frames inside containers too
    labels = EXAMPLES["labels"]
    assert digests.of(labels) == digests.of(labels) != digests.of(labels.fillna(0))


def test_a_step_must_be_a_function_of_a_module():
    """A lambda or a closure could read what its key leaves out: `Memory.call` refuses them."""
    from reports.analysis import tables
    from reports.machinery.memory import Memory

    memory = Memory()
    assert memory.call(len, [1, 2]) == 2 and memory.computed == ["len"]
    frame = pd.DataFrame({"corpus": ["a"], "paraphrase": pd.array([1], dtype="Int64"), "is_tie": [False]})
    assert len(memory.call(tables.table2, frame)) == 2  # its corpus, then Global
    for not_a_step in (lambda: 1, test_a_step_must_be_a_function_of_a_module.__code__.replace, memory.call):
        with pytest.raises(TypeError, match="not a step"):
            memory.call(not_a_step)
