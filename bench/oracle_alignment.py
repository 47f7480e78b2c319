"""How often llm_checked's yes-checker alignment accepts where the paper's prover's answer is known.

    python bench/oracle_alignment.py            # fixtures/oracle_yes_prover.jsonl, packaged MiniLM, CPU

The fixture holds the nine sentence pairs whose "Yes" prover outcome Zeng, Wang and Ibbetson
print (Table 12: three rejected; Table 13: one accepted; Table 14: three accepted, two
rejected). Their prover parses both sentences (constituency trees, matching paths);
ours aligns contiguous 2-4-word spans by MiniLM cosine (see the llm_checked card). The
oracle's part is taken out: every aligned phrase pair counts as confirmed ("upper") or
only identical phrases do ("identical only"), so the figures measure the alignment alone.
Not a test: it prints numbers.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics.llm_checked import candidate_alignments, same_phrase, yes_check  # noqa: E402
from metrics.loading import embedded_minilm_path, load_sentence_transformer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "oracle_yes_prover.jsonl"


def read_fixture(path=FIXTURE):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def outcomes(rows, encoder, *, max_words=4, threshold=0.5):
    """Per row: the paper's prover outcome and ours (phi_or, phi_and) with all, or only identical, phrases confirmed."""
    results = []
    for row in rows:
        found = candidate_alignments(row["s1"], row["s2"], encoder, max_words=max_words, threshold=threshold)
        pairs = {pair for aligned in found.values() if aligned for pair in aligned}
        upper = yes_check(found, dict.fromkeys(pairs, True))
        identical = yes_check(found, {pair: same_phrase(*pair) for pair in pairs})
        results.append(
            {
                "table": row["table"],
                "paper": row["paper_prover"],
                "phi_or": upper["phi_or"],
                "phi_and": upper["phi_and"],
                "phi_or_identical_only": identical["phi_or"],
                "phi_and_identical_only": identical["phi_and"],
            }
        )
    return results


def acceptance(results):
    """How many of the paper's accepted and rejected pairs each of our rules accepts: {rule: {paper: (k, n)}}."""
    rules = ("phi_or", "phi_and", "phi_or_identical_only", "phi_and_identical_only")
    table = {}
    for rule in rules:
        table[rule] = {}
        for paper in ("accept", "reject"):
            of = [r for r in results if r["paper"] == paper]
            table[rule][paper] = (sum(bool(r[rule]) for r in of), len(of))
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", default=str(FIXTURE))
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    encoder = load_sentence_transformer(str(embedded_minilm_path()), args.device)
    results = outcomes(read_fixture(args.fixture), encoder)
    for result in results:
        print(json.dumps(result))
    for rule, by_paper in acceptance(results).items():
        figures = ", ".join(f"paper {paper}ed: {k}/{n}" for paper, (k, n) in by_paper.items())
        print(f"{rule}: accepts {figures}")


if __name__ == "__main__":
    main()
