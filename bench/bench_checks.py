"""What the model checks cost: the one-call design against the per-claim N+1 design.

    .venv/bin/python bench/bench_checks.py           # offline: token counts bracketed
    .venv/bin/python bench/bench_checks.py --live    # with ANTHROPIC_API_KEY: counted by the API

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
  cache lifetime reads it (0.1x); below the minimum everything is base input.

Token counts, honestly: there is no offline tokenizer for current Claude models
(the SDK's `messages.count_tokens` is an API call, and this machine reaches only
loopback), so offline the bench does not pretend to count. It brackets every
count between LOW (UTF-8 bytes / 5) and HIGH (UTF-8 bytes / 2.5) tokens, plus
the 313-token tool-use system prompt the API adds for `tool_choice` any, and
reports each figure at both ends. English prose runs about 3.5 to 4.5 bytes a
token on Claude's tokenizers, so the bracket is wide on purpose. `--live` asks
the API (`messages.count_tokens`) for the real prefix length of each request.

The bracket cannot move the figure the 2.0 limit is about. Both calls of the
one-call design send the same prefix, so the article is either cached in both
(1.25 write + 0.10 read = 1.35 source reads) or in neither (1.00 + 1.00 = exactly
2.00): whatever the tokenizer says, the one-call design costs at most 2.0 source
reads, and exactly 2.0 whenever the prefix is below the model's cache minimum.
Where the bracket straddles the minimum, the worst case (2.00) is reported.

Designs:
* one call (copydesk): the summary, then one `record_checks` call per draft
  (claims and the seven-kind judgement together), sharing the cached prefix;
* per claim (older tools): the summary, one call to list the claims, then one
  call per claim with the whole article: N+1 check calls. Shown with the same
  cached prefix (its best case) and without caching, as older tools send it.

"source reads" counts the article's tokens only (what the 2.0 limit is about);
"all input" counts every input token of the article's calls (tools, system
prompt, instructions, draft), also in source reads, so fixed overheads show.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from summarise import prompt
from summarise.base import Article
from summarise.capabilities import TABLE

LENGTHS = (300, 1_000, 3_000)
CLAIMS_PER_DRAFT = 6  # a 3-sentence draft of an article: about two claims a sentence
# Minimum cacheable prompt length, tokens, as Anthropic documents it per model (the
# shipped table, summarise/capabilities.py): Haiku 4.5, Sonnet 4.5, and Haiku 5.5
# (a 512-token minimum: there the one-call design stays at 1.35 reads at every length).
BENCH_MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-haiku-5-5")
MIN_CACHEABLE = {m: TABLE[m].min_cacheable_tokens or 0 for m in BENCH_MODELS}
TOOL_USE_SYSTEM_TOKENS = 313  # added by the API for tool_choice any
# The token bracket, in UTF-8 bytes per token (see the module): few tokens, many tokens.
BRACKET = {"low": 5.0, "high": 2.5}
LIMIT = 2.0
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


Counter = Callable[[object], int]


def counter(bytes_per_token: float) -> Counter:
    def count(value: object) -> int:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return math.ceil(len(text.encode("utf-8")) / bytes_per_token)

    return count


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

    def __init__(self, min_cacheable: float, count: Counter):
        self.min_cacheable = min_cacheable
        self.count = count
        self.cache: set[str] = set()

    def call(self, body: dict, output_tokens: int, bill: Bill) -> None:
        block = body["messages"][0]["content"][0]
        prefix_tokens = TOOL_USE_SYSTEM_TOKENS + self.count(prefix_of(body))
        rest = self.count(body["messages"][0]["content"][1:])
        art = self.count(block["text"])
        key = json.dumps(prefix_of(body), sort_keys=True)
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


def prefix_of(body: dict) -> list:
    return [body["tools"], body["system"], body["messages"][0]["content"][0]]


def _purpose(name: str, instruction: str) -> prompt.Purpose:
    return prompt.Purpose(name, prompt.CHECK_TOOL_NAME, "bench", instruction)


def one_call(model: str, art: Article, scripted: ScriptedModel) -> tuple[Bill, int]:
    bill = Bill()
    summary = prompt.request_for(prompt.summary_purpose(3), art, model=model, max_tokens=4096)
    scripted.call(summary, SUMMARY_OUTPUT, bill)
    check = prompt.request_for(prompt.check_purpose(DRAFT), art, model=model, max_tokens=8192)
    scripted.call(check, 4 * CHECK_OUTPUT_PER_SENTENCE, bill)
    return bill, 2


def per_claim(model: str, art: Article, scripted: ScriptedModel) -> tuple[Bill, int]:
    bill = Bill()
    summary = prompt.request_for(prompt.summary_purpose(3), art, model=model, max_tokens=4096)
    scripted.call(summary, SUMMARY_OUTPUT, bill)
    listing = _purpose("claims", f"List every factual claim of this draft.\n\n{DRAFT}")
    scripted.call(prompt.request_for(listing, art, model=model, max_tokens=2048), 200, bill)
    for n in range(CLAIMS_PER_DRAFT):
        one = _purpose("verify", f"Does the article support claim {n}: 'The pumps ran 212 days'?")
        scripted.call(prompt.request_for(one, art, model=model, max_tokens=512), CLAIM_OUTPUT, bill)
    return bill, 2 + CLAIMS_PER_DRAFT


@dataclass
class Cell:
    """One design at one end of the token bracket: source reads and all input."""

    reads: float
    all_input: float
    calls: int


def measure(design, model: str, art: Article, minimum: float, count: Counter) -> Cell:  # type: ignore[no-untyped-def]
    bill, calls = design(model, art, ScriptedModel(minimum, count))
    source_once = count(prompt.article_block(art.title, art.text))
    return Cell(bill.article_cost / source_once, bill.input_cost / source_once, calls)


def live_prefix_tokens(model: str, art: Article) -> int | None:
    """The API's own count of the summary request's prefix (--live, with a key)."""
    if "--live" not in sys.argv or not os.environ.get("ANTHROPIC_API_KEY"):
        return None
    import anthropic

    body = prompt.request_for(prompt.summary_purpose(3), art, model=model, max_tokens=1)
    first = body["messages"][0]["content"][0]
    counted = anthropic.Anthropic().messages.count_tokens(
        model=model,
        tools=body["tools"],
        tool_choice=body["tool_choice"],
        system=body["system"],
        messages=[{"role": "user", "content": [first]}],
    )
    return counted.input_tokens


def _span(one: float, other: float, fmt: str = "{:.2f}") -> str:
    a, b = fmt.format(min(one, other)), fmt.format(max(one, other))
    return a if a == b else f"{a}-{b}"


def row(model: str, minimum: int, words: int) -> str:
    art = article(words)
    body = prompt.request_for(prompt.summary_purpose(3), art, model=model, max_tokens=1)
    ends = {name: counter(bpt) for name, bpt in BRACKET.items()}
    prefix = {n: TOOL_USE_SYSTEM_TOKENS + c(prefix_of(body)) for n, c in ends.items()}
    live = live_prefix_tokens(model, art)
    cached = {n: p >= minimum for n, p in prefix.items()}
    if live is not None:
        prefix = {"low": live, "high": live}
        cached = {"low": live >= minimum, "high": live >= minimum}
    cases = "yes" if all(cached.values()) else "no" if not any(cached.values()) else "either"
    one = {n: measure(one_call, model, art, minimum, c) for n, c in ends.items()}
    claim = {n: measure(per_claim, model, art, minimum, c) for n, c in ends.items()}
    bare = {n: measure(per_claim, model, art, math.inf, c) for n, c in ends.items()}
    worst = max(cell.reads for cell in one.values())
    usd = {
        n: cost_usd(model, one_call(model, art, ScriptedModel(minimum, c))[0])
        for n, c in ends.items()
    }
    return (
        f"{model + f' ({minimum})':<26} {words:>6} "
        f"{_span(prefix['low'], prefix['high'], '{}'):>11} "
        f"{cases:>7} | {worst:>5.2f} {LIMIT - worst:>6.2f} "
        f"{_span(one['low'].all_input, one['high'].all_input):>10} | "
        f"{_span(claim['low'].reads, claim['high'].reads):>10} "
        f"{_span(bare['low'].reads, bare['high'].reads):>8} "
        f"{_span(claim['low'].all_input, claim['high'].all_input):>11} | "
        f"{_span(usd['low'], usd['high'], '{:.5f}'):>17}"
    )


def cost_usd(model: str, bill: Bill) -> float:
    """What the one-call design's two calls cost in USD at the model's shipped price."""
    price = TABLE[model].price
    assert price is not None and price.input is not None and price.output is not None
    return (bill.input_cost * price.input + bill.output * price.output) / 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="API token counts (needs a key)")
    parser.parse_args()  # --live is read where it is used
    counting = (
        "API count (--live)"
        if "--live" in sys.argv and os.environ.get("ANTHROPIC_API_KEY")
        else "bracket, bytes/5 to bytes/2.5 (not measured)"
    )
    print(f"token counts: {counting}")
    print(
        f"{'':<26} {'':>6} {'':>11} {'':>7} | {'one call (copydesk): 2 calls':<28}"
        f" | per claim: {CLAIMS_PER_DRAFT + 2} calls ({CLAIMS_PER_DRAFT} claims)"
    )
    print(
        f"{'model (min cacheable)':<26} {'words':>6} {'prefix tok':>11} {'cached':>7} | "
        f"{'reads':>5} {'margin':>6} {'all input':>10} | {'reads':>10} {'no cache':>8} "
        f"{'all input':>11} | {'USD/article (1 call)':>17}"
    )
    for model, minimum in MIN_CACHEABLE.items():
        for words in LENGTHS:
            print(row(model, minimum, words))
    print(
        f"\nreads: the article's input cost / sending it once at the base price (limit "
        f"{LIMIT}); one call: the worst case over the token bracket, and its margin under "
        "the limit. Below the model's cache minimum the one-call design costs exactly 2.00 "
        "reads (summary 1.00 + check 1.00); at or above it, 1.35 (write 1.25 + read 0.10). "
        "all input: every input token of the article's calls, in source reads, at both "
        "ends of the bracket."
    )


if __name__ == "__main__":
    main()
