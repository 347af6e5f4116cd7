"""Recorded model outputs played back: deterministic answers for tests, exercises and graders.

A recording is a JSON file ``{"model": ..., "answers": [{"prompt": ..., "output": ...}, ...]}``
of outputs the real model gave (:func:`record_generations` writes one from the generation
cache). :class:`ReplayGenerator` answers a recorded prompt with its recorded output, and any
other prompt with one of the recorded outputs picked by the prompt's hash, so every prompt
gets a real model answer, the same one each time, and nothing runs a model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from chunklab.generate.cache import GenerationCache
from chunklab.generate.model import check_prompts, cut_at_stop

__all__ = ["RECORDING", "REPLAY_PREFIX", "ReplayGenerator", "record_generations"]

#: ``model="replay:PATH"`` names a recording instead of a model
REPLAY_PREFIX = "replay:"
#: the packaged recording: SmolLM2-135M-Instruct's answers to the LLM strategies' prompts on short texts
RECORDING = Path(__file__).resolve().parents[1] / "data" / "recorded" / "smollm2-135m.json"


class ReplayGenerator:
    """Answers prompts from a recording of a real model's outputs (see the module's docstring).

    ``model_calls`` stays 0; ``cache_hits`` counts the prompts answered by their own recording
    and ``unrecorded`` those answered by a recorded output of another prompt.
    """

    def __init__(self, answers: Sequence[tuple[str, str]], name: str = "replay") -> None:
        if not answers:
            raise ValueError("a replay needs at least one recorded answer")
        self.name = name
        self.model_id = name
        self._by_prompt = {prompt: output for prompt, output in answers}
        self._outputs = [output for _prompt, output in answers]
        self.model_calls = 0
        self.cache_hits = 0
        self.unrecorded = 0
        self.generated_tokens = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayGenerator:
        """The replay of the recording at ``path`` (a ValueError names the file when it is not one)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            answers = [(str(a["prompt"]), str(a["output"])) for a in data["answers"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"model='{REPLAY_PREFIX}{path}': not a recording of model answers ({exc})"
            ) from None
        return cls(answers, name=f"{REPLAY_PREFIX}{Path(path).name}")

    def generate(
        self, prompts: Sequence[str], *, max_new_tokens: int = 64, stop: Sequence[str] = ()
    ) -> list[str]:
        """The recorded answer to each prompt (or a recorded answer picked by its hash), cut at ``stop``."""
        out = []
        for prompt in check_prompts(prompts, max_new_tokens):
            answer = self._by_prompt.get(prompt)
            if answer is None:
                self.unrecorded += 1
                digest = hashlib.sha256(prompt.encode("utf-8", errors="surrogatepass")).digest()
                answer = self._outputs[int.from_bytes(digest[:8], "big") % len(self._outputs)]
            else:
                self.cache_hits += 1
            out.append(cut_at_stop(answer, stop))
        return out


def record_generations(cache: GenerationCache, path: str | Path, model: str) -> int:
    """Write every generation in ``cache`` as a recording at ``path`` (sorted by prompt); how many."""
    answers = []
    for entry in sorted(cache.root.glob("*/*.json")) if cache.root.is_dir() else []:
        record = json.loads(entry.read_text(encoding="utf-8"))
        answers.append({"prompt": record["prompt"], "output": record["output"]})
    answers.sort(key=lambda a: a["prompt"])
    Path(path).write_text(
        json.dumps({"model": model, "answers": answers}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    return len(answers)
