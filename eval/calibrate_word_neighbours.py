"""Calibrate the word-neighbour threshold of an embedding model on the libraries you have.

    python eval/calibrate_word_neighbours.py DATASET_DIR... [--profile paper] [--cache .policybot-eval]

A passage's word stands for a question's word in choosing quotes when the cosine of the two words'
vectors reaches ``Settings.word_neighbour_thresholds[model]`` (``policybot/answer/neighbours.py``).
The threshold is what 1 pair in 10,000 of a library's own words reaches by chance: for each set
the library is indexed (or reused from the eval cache), its words (letters only, three or more,
stopwords dropped) are taken one per stem (forms of one word are not two words), up to 2000 of
them are drawn with a fixed seed and embedded one by one, and the 99.99th percentile of the
cosines of all their pairs is printed, per set and as the median over sets: the value for
``POLICYBOT_WORD_NEIGHBOUR_THRESHOLDS``. No question or label is read, so the
value carries to libraries nobody has seen. Record it in eval/decisions/ with the model's name.
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from policybot.answer.neighbours import word_stems  # noqa: E402
from policybot.evaluation.datasets import load_dataset  # noqa: E402
from policybot.evaluation.harness import index_home  # noqa: E402
from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402
from policybot.store.lexical import Tokenizer  # noqa: E402

WORDS = 2000
QUANTILE = 0.9999


def library_words(bot: PolicyBot) -> list[str]:
    """The library's words as the neighbour finder reads them, one per stem (its first in order)."""
    registry, collection = bot.components.registry, bot.components.index.collection
    stems = word_stems("\n".join(text for _, text in registry.chunk_texts(collection)), Tokenizer())
    by_stem: dict[str, str] = {}
    for word in sorted(stems):
        by_stem.setdefault(stems[word], word)
    return sorted(by_stem.values())


def threshold(bot: PolicyBot, seed: int = 0) -> tuple[int, float]:
    words = library_words(bot)
    sample = sorted(np.random.default_rng(seed).choice(words, min(WORDS, len(words)), replace=False).tolist())
    vectors = np.asarray(bot.components.embedder.embed(sample), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = (vectors @ vectors.T)[np.triu_indices(len(sample), 1)]
    return len(words), float(np.quantile(sims, QUANTILE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--profile", default="lite")
    parser.add_argument("--cache", type=Path, default=Path(".policybot-eval"))
    args = parser.parse_args()
    found = []
    for root in args.datasets:
        dataset = load_dataset(root)
        settings = Settings(profile=args.profile, llm_mode="off")
        bot = PolicyBot(settings.model_copy(update={"home": index_home(args.cache, dataset, settings)}))
        report = bot.ingest(dataset.docs)
        if report.failed:
            raise SystemExit(f"{root.name}: could not index {[o.message for o in report.failed]}")
        words, value = threshold(bot)
        found.append(value)
        print(f"{root.name:24s} {words:6d} words  p99.99 of random word pairs {value:.3f}")
    model = bot.components.profile.profile.embedding.base_name
    print(f"{model}: median over {len(found)} sets {statistics.median(found):.3f}")


if __name__ == "__main__":
    main()
