"""A GGUF file is converted once into the Hugging Face cache and read from that copy after; the copy equals what
transformers reads from the file itself (the embedded SmolLM2's tokenizer: its model's weights were compared
once by hand, tensor by tensor and logit by logit, and test_parapluie's scores rest on them)."""

from pathlib import Path

import pytest
from huggingface_hub import constants

from metrics import loading


@pytest.fixture
def cache_home(monkeypatch, tmp_path):
    monkeypatch.setattr(constants, "HF_HOME", str(tmp_path / "hf"))
    return tmp_path / "hf" / "parasol-gguf"


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"a GGUF file")
    return path


def counting_conversions(monkeypatch):
    made = []

    def convert(path, part, folder):
        made.append(part)
        (Path(folder) / "config.json").write_text(part)

    monkeypatch.setattr(loading, "_convert_gguf", convert)
    return made


def test_it_converts_each_part_once_then_reads_the_copy(monkeypatch, cache_home, gguf):
    made = counting_conversions(monkeypatch)
    model = loading._converted_gguf(gguf, "model")
    assert loading._converted_gguf(gguf, "model") == model and made == ["model"]
    assert loading._pretrained_location(gguf, "tokenizer") == (model.parent / "tokenizer", {})
    assert made == ["model", "tokenizer"]
    assert [p.name for p in cache_home.iterdir()] == [model.parent.name]  # no scratch folder left behind


def test_another_file_content_is_another_copy(monkeypatch, cache_home, gguf):
    counting_conversions(monkeypatch)
    first = loading._converted_gguf(gguf, "model")
    gguf.write_bytes(b"another GGUF file")
    loading.model_revision.cache_clear()
    assert loading._converted_gguf(gguf, "model") != first


def test_a_failed_conversion_leaves_nothing_and_raises(monkeypatch, cache_home, gguf):
    def broken(path, part, folder):
        (Path(folder) / "half").write_text("")
        raise ValueError("not a GGUF file")

    monkeypatch.setattr(loading, "_convert_gguf", broken)
    with pytest.raises(ValueError):
        loading._converted_gguf(gguf, "model")
    assert [list(p.iterdir()) for p in cache_home.iterdir()] == [[]]


def test_an_unwritable_cache_reads_the_gguf_file_itself(monkeypatch, tmp_path, gguf):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setattr(constants, "HF_HOME", str(blocker))  # a folder cannot be made under a file
    counting_conversions(monkeypatch)
    assert loading._pretrained_location(gguf, "model") == (gguf.parent, {"gguf_file": gguf.name})


def test_the_embedded_tokenizer_read_from_its_copy_equals_the_one_read_from_the_gguf_file():
    from transformers import AutoTokenizer

    path = loading.embedded_smollm2_path()
    # The machine's own copy, which every other test reads: only the direct read costs (about 18 s).
    folder, options = loading._pretrained_location(path, "tokenizer")
    assert options == {} and folder.is_relative_to(loading._gguf_cache_home())
    copy = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    read = AutoTokenizer.from_pretrained(path.parent, local_files_only=True, gguf_file=path.name)
    text = "It's raining  cats\tand dogs: ünïcode, <|im_end|> and 12345.\n"
    assert copy(text)["input_ids"] == read(text)["input_ids"]
    assert copy.chat_template == read.chat_template and copy.special_tokens_map == read.special_tokens_map
    assert copy.get_vocab() == read.get_vocab()


def test_the_embedded_model_read_from_its_copy_equals_the_one_read_from_the_gguf_file():
    """Every in-process LLM score rests on the copy: the same weights, tensor by tensor, and the same logits."""
    import torch
    from transformers import AutoModelForCausalLM

    path = loading.embedded_smollm2_path()
    folder, options = loading._pretrained_location(path, "model")
    assert options == {} and folder.is_relative_to(loading._gguf_cache_home())
    copy = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).eval()
    read = AutoModelForCausalLM.from_pretrained(
        path.parent, local_files_only=True, gguf_file=path.name, dtype=torch.float32
    ).eval()  # the direct read: about 40 s of parsing on one core
    copied, direct = copy.state_dict(), read.state_dict()
    assert copied.keys() == direct.keys()
    assert all(torch.equal(copied[name], direct[name]) for name in direct)
    ids = loading.load_chat_tokenizer(loading.EMBEDDED)("Is this a paraphrase? Yes.", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert torch.equal(copy(ids).logits, read(ids).logits)
