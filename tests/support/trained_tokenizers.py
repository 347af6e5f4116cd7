"""Two tokenizers trained at test time, other length units than the model's WordPiece.

A BPE whose pre-tokenizer splits at whitespace and punctuation (a token never spans a space) and a
byte-level BPE (GPT-2 style: a token carries the space before a word), trained with the
``tokenizers`` library on a few lines of every format.
"""

from __future__ import annotations

from pathlib import Path

#: what the tokenizers learn from: prose, code, a table, HTML, reStructuredText
TRAINING_TEXT = [
    "Install the tool with pip, then run it once to write the settings file.",
    "def handler(request):\n    return request.json()\n",
    "| port | host |\n|------|------|\n| 8080 | localhost |",
    "<p>The <b>depot</b> opens at six &amp; closes at nine.</p>",
    "Section\n=======\n\nSome reStructuredText with a literal block::\n\n    code here\n",
] * 20


def train_tokenizer(tmp: Path, kind: str) -> str:
    """A BPE (``kind="bpe"``: whitespace pre-tokenizer) or byte-level BPE trained here; its unit name."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if kind == "bpe":
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(vocab_size=120, special_tokens=["[UNK]"])
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TRAINING_TEXT, trainer)
    path = tmp / f"{kind}-tokenizer.json"
    tok.save(str(path))
    return f"tokenizer:{path}"
