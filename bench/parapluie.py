"""ParaPLUIE throughput: the real scorer against a naive reference, side by side in one process.

The naive reference is the paper's formulation run plainly: two full forward passes
per pair (Tpl∘yes and Tpl∘no), batch 1, no prefix reuse. The real scorer runs one
pass per pair, batched by length, on top of the template prefix's KV cache.

    python bench/parapluie.py                               # embedded SmolLM2, CPU
    python bench/parapluie.py --device cuda --dtype bfloat16 --random-weights-config mistral-7b

Target: FS-DIRECT at least 10x the naive rate (CPU, embedded model); on one H100 at the 7B
shape, FS-DIRECT >= 500 pairs/s (about 40% MFU) with a ratio to naive close to the FLOP bound.
Not a test: it prints numbers.

FLOPs are counted as 2 x parameters (embeddings included) x tokens run through the model,
the usual dense-transformer estimate (attention's own term left out). Tokens: the naive
reference runs Tpl+answer twice per pair; the real scorer runs each pair's tokens after the
shared prefix once, plus the prefix once per scorer (padding not counted). MFU is that FLOP/s
over --peak-tflops (default 800 on CUDA, an H100's bf16 dense matrix rate; none on CPU).
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from metrics import get_metric  # noqa: E402
from metrics.loading import EMBEDDED, load_causal_lm, load_chat_tokenizer, torch_dtype  # noqa: E402

SUBJECTS = ["The council", "My neighbour", "The new film", "Gilroy police", "The trading volume", "A rusty train"]
FACTS = [
    "approved the budget on Thursday",
    "was released in 1966 and praised by critics",
    "described the suspect as cooperative",
    "was lighter than usual at the close",
    "stood on the tracks for years",
    "refused to comment on the report",
]
REWRITES = ["{s} {f}.", "It is said that {s} {f}.", "{s} reportedly {f}, according to officials.", "{s} never {f}."]


def generate_pairs(count):
    """Sources and hypotheses of assorted lengths: rewrites, negations and unrelated sentences."""
    sources, hypotheses = [], []
    for i in range(count):
        subject, fact = SUBJECTS[i % len(SUBJECTS)], FACTS[(i // len(SUBJECTS)) % len(FACTS)]
        other = FACTS[(i + 3) % len(FACTS)]
        sources.append(f"{subject} {fact}.")
        rewrite = REWRITES[i % len(REWRITES)]
        hypotheses.append(rewrite.format(s=subject, f=fact if i % 3 else other))
    return sources, hypotheses


def random_weights(spec, tokenizer, device, dtype):
    """A randomly initialised model of a given shape (for GPU timing without the weights)."""
    from transformers import AutoConfig, AutoModelForCausalLM, MistralConfig

    # MistralConfig's defaults are Mistral-7B's shape (32 layers, 4096 wide, 8 KV heads).
    config = MistralConfig() if spec == "mistral-7b" else AutoConfig.from_pretrained(spec, local_files_only=True)
    config.vocab_size = max(config.vocab_size, len(tokenizer))
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype(dtype, device))
    return model.eval()


def rate(function, sources, hypotheses, batched=False):
    """(pairs per second, scores): ``function`` once per pair, or once on all pairs when ``batched``."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    if batched:
        scores = function(sources=sources, hypotheses=hypotheses)
    else:
        scores = [function(source, hypothesis) for source, hypothesis in zip(sources, hypotheses)]
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return len(sources) / (time.perf_counter() - start), scores


def token_counts(metric, sources, hypotheses):
    """(naive tokens, real tokens) the two scorers run for these pairs, pads aside."""
    lengths = [len(metric.sequence_ids(s, h)) for s, h in zip(sources, hypotheses)]
    prefix = len(metric.shared_prefix()[0])
    naive = sum(2 * (length + 1) for length in lengths)
    real = prefix + sum(length - prefix for length in lengths)
    return naive, real


def flop_line(rate, tokens_per_pair, parameters, peak_tflops):
    """Achieved FLOP/s (2 x parameters x tokens) and its share of the peak when one is known."""
    achieved = 2 * parameters * tokens_per_pair * rate
    mfu = f"MFU {achieved / (peak_tflops * 1e12):6.1%}" if peak_tflops else "MFU n/a (no peak for this device)"
    return f"{achieved / 1e12:8.3f} TFLOP/s  {mfu}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=EMBEDDED, help="PARAPLUIE_MODEL: 'embedded', a directory, a .gguf file")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"])
    parser.add_argument("--random-weights-config", help="'mistral-7b' or a config directory: random weights")
    parser.add_argument("--pairs", type=int, default=32)
    parser.add_argument("--naive-pairs", type=int, help="pairs for the slow naive reference (default: --pairs)")
    parser.add_argument("--batch-size", type=int, nargs="+", default=[8], help="one or more: a sweep, e.g. 8 32 128")
    parser.add_argument("--templates", nargs="+", default=["parapluie_direct", "parapluie_fs_direct"])
    parser.add_argument("--threads", type=int, help="torch CPU threads (1 avoids OpenMP stalls on a busy machine)")
    parser.add_argument("--peak-tflops", type=float, help="the device's dense matrix rate (default: 800 on CUDA)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    peak = args.peak_tflops or (800.0 if args.device.startswith("cuda") else None)

    if args.random_weights_config:
        # The weights are drawn at random in that shape: only the tokenizer is read (`--model` may then be a
        # folder holding a tokenizer alone, as on a GPU machine without the embedded model's package).
        tokenizer = load_chat_tokenizer(args.model)
        model = random_weights(args.random_weights_config, tokenizer, args.device, args.dtype)
    else:
        tokenizer, model = load_causal_lm(args.model, args.device, args.dtype)
    parameters = sum(p.numel() for p in model.parameters())
    sources, hypotheses = generate_pairs(args.pairs)
    few = args.naive_pairs or args.pairs
    print(f"{args.pairs} pairs ({few} for the naive reference); model {args.random_weights_config or args.model} "
          f"({parameters / 1e9:.3f} B parameters, {model.dtype}) on {args.device}; torch threads "
          f"{torch.get_num_threads()}; batch sizes {args.batch_size}; peak {peak or 'unknown'} TFLOP/s")  # fmt: skip
    for name in args.templates:
        options = {"device": args.device, "dtype": args.dtype, "loaded": (tokenizer, model)}
        naive_metric = get_metric(name, batch_size=args.batch_size[0], **options)
        naive_metric.reference_log_odds(sources[0], hypotheses[0])  # warm-up, outside both timings
        naive_rate, naive = rate(naive_metric.reference_log_odds, sources[:few], hypotheses[:few])
        naive_tokens, real_tokens = token_counts(naive_metric, sources, hypotheses)
        naive_per_pair, real_per_pair = naive_tokens / len(sources), real_tokens / len(sources)
        print(f"{name:20s} naive {naive_rate:9.2f} pairs/s  {naive_per_pair:7.1f} tokens/pair  "
              f"{flop_line(naive_rate, naive_per_pair, parameters, peak)}")  # fmt: skip
        for batch_size in args.batch_size:
            # A fresh scorer, so the prefix computation is inside the timing.
            metric = get_metric(name, batch_size=batch_size, **options)
            real_rate, real = rate(metric.score, sources, hypotheses, batched=True)
            gap = max(abs(a - b) for a, b in zip(real[:few], naive))
            print(f"{'':20s} real  {real_rate:9.2f} pairs/s  {real_per_pair:7.1f} tokens/pair  "
                  f"{flop_line(real_rate, real_per_pair, parameters, peak)}  batch {batch_size:4d}  "
                  f"ratio {real_rate / naive_rate:6.1f}x (FLOP bound {naive_tokens / real_tokens:5.1f}x)  "
                  f"prefix {len(metric.shared_prefix()[0])} tokens  max |real - naive| {gap:.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
