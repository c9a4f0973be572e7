import random

from stores.tokens import count_text_tokens, count_tokens, lines_add_up

ALPHABET = (list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789.,;:!?'\"-_()[]/#@\t")
            + ["é", "e\u0301", "\u0301", "ß", "Σ", "ΑΣ", "日", "本", "語", "テ", "😀", "\u200b", "\x07", "\u00a0", "ﬁ", "İ"])


def test_the_project_tokenizer_is_one_whose_lines_add_up():
    assert lines_add_up()


def test_lines_joined_by_newlines_count_the_sum_of_their_counts_on_random_text():
    rng = random.Random(11)
    for _ in range(400):
        lines = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(rng.randint(1, 6))]
        text = "\n".join(lines)
        assert count_tokens(text) == sum(count_tokens(x) for x in lines), repr(lines)
        assert count_text_tokens(text) == count_tokens(text)
