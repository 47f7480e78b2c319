"""ParaPLUIE's three templates, word for word from the paper (section 3.1, appendix A.4).

Each template is a list of (role, content) turns; ``{source}`` and ``{hypothesis}``
are filled in one pass (so braces inside a sentence are left alone) and the turns
go through the model's own chat template with ``add_generation_prompt=True``.
"""

DIRECT_INSTRUCTION = (
    "You will receive two sentences A and B. Do these two sentences mean the same thing? "
    'Answer with only one word "yes" or "no".'
)
INDIRECT_INSTRUCTION = "You will receive two sentences A and B. Do these two sentences mean the same thing?"
ASSISTANT_READY = "Please provide the sentences for me to evaluate."
PAIR = 'A: "{source}"; B: "{hypothesis}"'
SUMMARIZE = 'Summarize your answer with only one word "yes" or "no".'

# Appendix A.4, spacing and quotes as printed (" ." and " ," included).
FEW_SHOT_EXAMPLES = [
    (
        'Amrozi accused his brother, whom he called "the witness", of deliberately distorting his evidence .',
        "Amrozi accused his brother, whom he disparagingly referred to as 'the liar witness', "
        "of intentionally twisting his testimony.",
        "No",
    ),
    (
        "Pennmakkal is an Indian Malayalam film from 1966, produced by J. Sasikumar and directed by KP Kottarakkara.",
        "The Indian Malayalam film 'Pennmakkal', released in 1966, was produced by J. Sasikumar "
        "and directed by KP Kottarakkara.",
        "Yes",
    ),
    (
        "Sorkin, who faces charges of conspiracy to obstruct justice and lying to a grand jury, "
        "was to have been tried separately.",
        "Despite being accused of conspiring to obstruct justice and perjury, Sorkin was supposed to stand trial "
        "on his own.",
        "No",
    ),
    (
        "Gilroy police and FBI agents described Gehring as cooperative, but said Saturday that he had revealed "
        "nothing about what had happened to the children .",
        "Although Gilroy police and FBI agents reported that Gehring was cooperative , he hadn't disclosed any "
        "information about the children's whereabouts or what had happened to them as of Saturday.",
        "No",
    ),
    (
        'Whereas "e" the electric charge of the particle and A is the magnetic vector potential of the '
        "electromagnetic field.",
        'The electric charge of the particle is denoted by "e", and the magnetic vector potential of the '
        "electromagnetic field is denoted by 'A'.",
        "Yes",
    ),
    (
        "The Jidanul River is a tributary of the Jiul de Vest River in Romania.",
        "The Jidanul River is a mere insignificant stream that flows into the grand Jiul de Vest River in Romania.",
        "No",
    ),
]


def _pair_turn(source, hypothesis):
    # Literal pairs of the few-shot examples are written with the same pattern as the scored pair.
    return PAIR.replace("{source}", source, 1).replace("{hypothesis}", hypothesis, 1)


DIRECT = (
    ("user", DIRECT_INSTRUCTION),
    ("assistant", ASSISTANT_READY),
    ("user", PAIR),
)

FS_DIRECT = (
    ("user", DIRECT_INSTRUCTION),
    ("assistant", ASSISTANT_READY),
    *(turn for s, h, answer in FEW_SHOT_EXAMPLES for turn in (("user", _pair_turn(s, h)), ("assistant", answer))),
    ("user", PAIR),
)

# INDIRECT is scored in two steps: the model answers INDIRECT freely (its
# explanation E, greedy), then E is replayed as an assistant turn before SUMMARIZE.
INDIRECT = (
    ("user", INDIRECT_INSTRUCTION),
    ("assistant", ASSISTANT_READY),
    ("user", PAIR),
)
INDIRECT_FOLLOW_UP = (("user", SUMMARIZE),)

TEMPLATES = {"direct": DIRECT, "indirect": INDIRECT, "fs_direct": FS_DIRECT}
