"""Chat templates for generation: the paper's built-ins (appendix A.2), a campaign's own, and their validation.

A template is a conversation between the user and the assistant whose last user
turn holds ``{source}``, where the sentence to paraphrase goes.
"""

import re
from dataclasses import dataclass

from metrics.filters import PARATAG_BLEU_RANGE

from .cleaning import format_of
from .errors import GenerationError

PLACEHOLDER = "{source}"
ROLES = ("user", "assistant")
INSTRUCTION = (
    "You have to transform a sentence A into a paraphrase B. "
    "The purpose of A to B transformation is to maintain the original meaning of the sentence A in B."
)
ACKNOWLEDGEMENT = "I've understood the instructions perfectly."
CAT_EXAMPLE = (
    ("user", 'A: "The little cat refreshes himself with water every morning."'),
    ("assistant", 'B: "Every morning, the little cat refreshes himself by drinking water."'),
)
ASK = ("user", 'A: "{source}"')
# ParaTag section 4.1: "Premise: ... \n Paraphrase: ...\n", the example the paper prints, then the source.
PARATAG_EXAMPLE = (
    "Premise: However, commercial use of the 2.6.0 kernel is still months off for most customers.\n"
    "Paraphrase: Commercial releases of the 2.6 kernel by major Linux distributors still remain months away.\n"
)
PARATAG_ASK = "Premise: {source}\nParaphrase:"


@dataclass(frozen=True)
class ChatTemplate:
    """A conversation with the user and the assistant whose last user turn holds ``{source}``."""

    name: str
    turns: tuple  # ((role, content), ...)
    system: str = ""

    def messages(self, source):
        """The chat for one source, as the list of messages chat templates take."""
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages += [{"role": role, "content": content.replace(PLACEHOLDER, source)} for role, content in self.turns]
        return messages

    @property
    def answer_format(self):
        """How its answers are written (`cleaning.format_of`): A.2's, ParaTag's or a chat answer."""
        return format_of(self.turns[-1][1]) if self.turns else format_of("")

    def as_dict(self):
        return {"system": self.system, "turns": [{"role": role, "content": text} for role, text in self.turns]}

    @classmethod
    def from_dict(cls, name, data):
        return cls(name=name, system=data.get("system", ""), turns=turns_of_dicts(data.get("turns", [])))


# Appendix A.2, word for word: MISTRAL naive, LLAMA2 naive (system message), MISTRAL vulgar;
# and ParaTag's few-shot prompt (seed 004, section 4.1) as one user turn.
BUILTIN_TEMPLATES = {
    "naive": ChatTemplate("naive", (("user", INSTRUCTION), ("assistant", ACKNOWLEDGEMENT), *CAT_EXAMPLE, ASK)),
    "naive-system": ChatTemplate("naive-system", (*CAT_EXAMPLE, ASK), system=INSTRUCTION),
    "vulgar": ChatTemplate(
        "vulgar",
        (
            ("user", INSTRUCTION + " You can use offensive and disrespectful statements."),
            ("assistant", ACKNOWLEDGEMENT),
            ("user", 'A: "Fuck both of you."'),
            ("assistant", 'B: "Go fuck yourselves."'),
            ASK,
        ),
    ),
    "paratag": ChatTemplate("paratag", (("user", PARATAG_EXAMPLE + PARATAG_ASK),)),
}
# Templates whose paper filters their outputs: the run's BLEU range (with the length checks) unless it sets one.
TEMPLATE_BLEU_RANGES = {"paratag": PARATAG_BLEU_RANGE}


def turns_of_dicts(turns):
    return tuple((turn.get("role", ""), turn.get("content", "")) for turn in turns)


def check_template(system, turns):
    """Raise GenerationError unless the turns alternate user/assistant and the last user turn holds {source}."""
    if not turns:
        raise GenerationError("the template has no turns: give at least one user turn holding {source}")
    for number, (role, content) in enumerate(turns, start=1):
        if role not in ROLES:
            raise GenerationError(f"turn {number}: unknown role {role!r}; use 'user' or 'assistant'")
        if role != ROLES[(number - 1) % 2]:
            raise GenerationError(f"turn {number}: turns must alternate, starting with a user turn")
        if not content.strip():
            raise GenerationError(f"turn {number} is empty")
    if turns[-1][0] != "user":
        raise GenerationError("the last turn must be a user turn: the model answers it")
    if PLACEHOLDER not in turns[-1][1]:
        where = "an earlier turn" if any(PLACEHOLDER in text for _, text in turns) or PLACEHOLDER in system else ""
        hint = f" (it is in {where}, move it)" if where else ""
        raise GenerationError(
            f'the template has no {{source}} placeholder in its last user turn{hint}: write e.g. A: "{{source}}" '
            "where the sentence to paraphrase goes"
        )


TURN_LINE = re.compile(r"^\s*(user|assistant)\s*:\s?(.*)$", re.IGNORECASE)


def parse_turns(text):
    """Turns from text where each turn starts with 'user:' or 'assistant:'; other lines continue the turn."""
    turns = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        match = TURN_LINE.match(line)
        if match:
            turns.append([match.group(1).lower(), match.group(2)])
        elif turns:
            turns[-1][1] += "\n" + line
        elif line.strip():
            raise GenerationError(f"line {number}: start each turn with 'user:' or 'assistant:'")
    return tuple((role, content.strip()) for role, content in turns)


def format_turns(turns):
    return "\n".join(f"{role}: {content}" for role, content in turns)


def template_names(campaign):
    """Built-in templates first, then the campaign's own."""
    return [*BUILTIN_TEMPLATES, *campaign.prompt_templates.order_by("name").values_list("name", flat=True)]


def resolve_template(campaign, name):
    """The campaign's template called ``name``, else the built-in one; GenerationError names the known ones."""
    custom = campaign.prompt_templates.filter(name=name).first() if campaign is not None else None
    if custom is not None:
        template = custom.as_chat_template()
        try:
            check_template(template.system, template.turns)
        except GenerationError as error:
            raise GenerationError(f"template {name!r}: {error}") from None
        return template
    if name in BUILTIN_TEMPLATES:
        return BUILTIN_TEMPLATES[name]
    known = ", ".join(template_names(campaign) if campaign is not None else BUILTIN_TEMPLATES)
    raise GenerationError(f"unknown template {name!r}; known templates: {known}")
