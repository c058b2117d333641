"""What the model checks cost: the one-call design against the per-claim N+1 design.

    .venv/bin/python bench/bench_checks.py

Cost is counted in *source reads*: the input cost of sending the article once at
the base input price. For each article length (300, 1,000 and 3,000 words) and
each model's minimum cacheable prompt length, a scripted model bills every
request the way the Messages API does:

* the requests are the real ones, built by `summarise.prompt.request_for`
  (shared tools, system prompt, article block with its cache breakpoint, then
  the purpose's instruction);
* the prefix up to the breakpoint is cached only when it is at least the
  model's minimum cacheable length; the first request with a prefix writes it
  (billed at 1.25x the base input price), a later identical prefix within the
  cache lifetime reads it (0.1x); below the minimum everything is base input;
* tokens are estimated as 1 per 4 characters of the request JSON (plus the
  tool-use system prompt the API adds, 313 tokens for `tool_choice` any); the
  ratios do not depend much on that estimate because both designs send the
  same kinds of text.

Designs:
* one call (copydesk): the summary, then one `record_checks` call per draft
  (claims and the seven-kind judgement together), sharing the cached prefix;
* per claim (older tools): the summary, one call to list the claims, then one
  call per claim with the whole article; it is given the same cached prefix,
  its best case; and without caching, as older tools send it (N+1 reads
  and the summary's).

"source reads" counts the article's tokens only (what the 2.0 limit is about);
"all input" counts every input token of the article's calls (tools, system
prompt, instructions, draft), also in source reads, so fixed overheads show.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from summarise import prompt
from summarise.base import Article

LENGTHS = (300, 1_000, 3_000)
CLAIMS_PER_DRAFT = 6  # a 3-sentence draft of an article: about two claims a sentence
# Minimum cacheable prompt length, tokens, as Anthropic documents it per model.
MIN_CACHEABLE = {"claude-haiku-4-5": 4096, "claude-sonnet-4-5": 1024}
TOOL_USE_SYSTEM_TOKENS = 313  # added by the API for tool_choice any
WRITE, READ = 1.25, 0.10  # cache write and read, times the base input price
SUMMARY_OUTPUT, CHECK_OUTPUT_PER_SENTENCE, CLAIM_OUTPUT = 120, 160, 40

_SENTENCES = (
    "The Harlow Fen drainage board met on Thursday to discuss the pumping station at Orrin Dyke.",
    "Its chair, Wenna Castell, said the pumps had run for 212 days last year, a record.",
    "Farmers on the lower fen asked the board to publish the cost of the new intake screens.",
    "An engineer told the meeting that the screens could be fitted before the winter rains.",
    "The board estimated the work at between 180,000 and 240,000 pounds.",
    "Residents of Stallbridge said the pumping noise had kept them awake in February.",
    "The board agreed to measure the noise at three houses and report back in June.",
)


def article(words: int) -> Article:
    """An invented article of about `words` words."""
    parts: list[str] = []
    count = 0
    i = 0
    while count < words:
        sentence = _SENTENCES[i % len(_SENTENCES)]
        parts.append(sentence)
        count += len(sentence.split())
        i += 1
    paragraphs = [" ".join(parts[n : n + 4]) for n in range(0, len(parts), 4)]
    return Article(
        f"bench-{words}", "Drainage board weighs pump repairs", None, "\n\n".join(paragraphs)
    )


DRAFT = (
    "Drainage board weighs pump repairs\n\n"
    "The Harlow Fen drainage board discussed the Orrin Dyke pumping station. "
    "Its chair said the pumps had run for 212 days last year. "
    "The board estimated the screens at between 180,000 and 240,000 pounds."
)


def tokens(value: object) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return math.ceil(len(text) / 4)


@dataclass
class Bill:
    """Input tokens billed, by kind, and the article's share of them."""

    base: int = 0
    write: int = 0
    read: int = 0
    output: int = 0
    article_cost: float = 0.0  # in base-price tokens

    @property
    def input_cost(self) -> float:
        return self.base + WRITE * self.write + READ * self.read


class ScriptedModel:
    """Bills a request like the API: prefix caching with a minimum length."""

    def __init__(self, min_cacheable: float):
        self.min_cacheable = min_cacheable
        self.cache: set[str] = set()

    def call(self, body: dict, output_tokens: int, bill: Bill) -> None:
        block = body["messages"][0]["content"][0]
        prefix = [body["tools"], body["system"], block]
        prefix_tokens = TOOL_USE_SYSTEM_TOKENS + tokens(prefix)
        rest = tokens(body["messages"][0]["content"][1:])
        art = tokens(block["text"])
        key = json.dumps(prefix, sort_keys=True)
        if prefix_tokens >= self.min_cacheable:
            if key in self.cache:
                bill.read += prefix_tokens
                bill.article_cost += READ * art
            else:
                self.cache.add(key)
                bill.write += prefix_tokens
                bill.article_cost += WRITE * art
        else:
            bill.base += prefix_tokens
            bill.article_cost += art
        bill.base += rest
        bill.output += output_tokens


def _purpose(name: str, instruction: str) -> prompt.Purpose:
    return prompt.Purpose(name, prompt.CHECK_TOOL_NAME, "bench", instruction)


def one_call(model: str, art: Article, min_cacheable: float) -> tuple[Bill, int]:
    scripted, bill = ScriptedModel(min_cacheable), Bill()
    summary = prompt.request_for(prompt.summary_purpose(3), art, model=model, max_tokens=4096)
    scripted.call(summary, SUMMARY_OUTPUT, bill)
    check = prompt.request_for(prompt.check_purpose(DRAFT), art, model=model, max_tokens=8192)
    scripted.call(check, 4 * CHECK_OUTPUT_PER_SENTENCE, bill)
    return bill, 2


def per_claim(model: str, art: Article, min_cacheable: float) -> tuple[Bill, int]:
    scripted, bill = ScriptedModel(min_cacheable), Bill()
    summary = prompt.request_for(prompt.summary_purpose(3), art, model=model, max_tokens=4096)
    scripted.call(summary, SUMMARY_OUTPUT, bill)
    listing = _purpose("claims", f"List every factual claim of this draft.\n\n{DRAFT}")
    scripted.call(prompt.request_for(listing, art, model=model, max_tokens=2048), 200, bill)
    for n in range(CLAIMS_PER_DRAFT):
        one = _purpose("verify", f"Does the article support claim {n}: 'The pumps ran 212 days'?")
        scripted.call(prompt.request_for(one, art, model=model, max_tokens=512), CLAIM_OUTPUT, bill)
    return bill, 2 + CLAIMS_PER_DRAFT


def main() -> None:
    print(
        f"{'model (min cache)':<28} {'words':>6} {'prefix tok':>10} {'design':<19} {'calls':>5} "
        f"{'source reads':>12} {'all input':>10} {'USD/article':>12}"
    )
    prices = {"input": 1.0, "output": 5.0}  # claude-haiku-4-5, USD per million tokens
    for model, minimum in MIN_CACHEABLE.items():
        for words in LENGTHS:
            art = article(words)
            source_once = tokens(prompt.article_block(art.title, art.text))
            body = prompt.request_for(prompt.summary_purpose(3), art, model=model, max_tokens=1)
            prefix = TOOL_USE_SYSTEM_TOKENS + tokens(
                [body["tools"], body["system"], body["messages"][0]["content"][0]]
            )
            designs = (
                ("one call", one_call, minimum),
                ("per claim", per_claim, minimum),
                ("per claim, no cache", per_claim, math.inf),
            )
            for name, design, cache_from in designs:
                bill, calls = design(model, art, cache_from)
                usd = (bill.input_cost * prices["input"] + bill.output * prices["output"]) / 1e6
                print(
                    f"{model + f' ({minimum})':<28} {words:>6} {prefix:>10} {name:<19} {calls:>5} "
                    f"{bill.article_cost / source_once:>12.2f} "
                    f"{bill.input_cost / source_once:>10.2f} {usd:>12.5f}"
                )
    print(
        f"\nsource reads: the article's input cost / sending it once at the base price "
        f"(limit 2.0). per claim: {CLAIMS_PER_DRAFT} claims. USD at Haiku 4.5 prices "
        "(input 1, output 5 per million) for both rows, to compare designs, not models."
    )


if __name__ == "__main__":
    main()
