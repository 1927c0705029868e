"""The matcher's hubness correction (`figlink.learn.hubness`): each item's normalizer over a bank of queries,
balanced by Sinkhorn iterations, taken off its score; how models saved before it score."""

from __future__ import annotations

import numpy as np
import pytest

from figlink.learn.hubness import (Hubness, balance, bank_rows, column_normalizers, corrected, item_normalizers,
                                   pool_corrected)
from figlink.learn.matcher import MatcherConfig

# queries × items: item 0 is a hub, the best item of every query, though only query 0 is its match
HUB = np.array([[0.9, 0.5, 0.1], [0.8, 0.6, 0.2], [0.8, 0.3, 0.5]])


def test_one_iteration_by_hand():
    # T = 0.04, rows first (c = 0): r = T-scaled log-mean-exp of each row, e.g. row 0: 22.5 + log((1 + e^-10 +
    # e^-20) / 3) = 21.4014; then item 0: log-mean-exp of (22.5 - 21.4014, 20 - 18.9080, 20 - 18.9020) = 1.0962,
    # × T = 0.04385; item 1: -4.9998 × T = -0.2000
    c = item_normalizers(HUB, Hubness(0.04, 1))
    assert c[0] == pytest.approx(0.04385, abs=1e-4) and c[1] == pytest.approx(-0.2000, abs=1e-4)


def test_the_hub_no_longer_takes_every_query():
    assert HUB.argmax(axis=1).tolist() == [0, 0, 0]
    assert pool_corrected(HUB, Hubness()).argmax(axis=1).tolist() == [0, 1, 2]
    c = item_normalizers(HUB, Hubness())
    assert np.allclose(corrected(HUB, c), HUB - c[None, :]) and c.argmax() == 0


def test_a_query_made_uniformly_stronger_changes_no_normalizer():
    shifted = HUB + np.array([[0.3], [0.0], [-0.2]])  # each query's scores moved by its own constant
    # float32 blocks: equal to a millionth (the normalizers are differences of scores near 1)
    assert item_normalizers(shifted, Hubness()) == pytest.approx(item_normalizers(HUB, Hubness()), abs=1e-6)


def test_balancing_in_blocks_of_one_item_gives_the_whole_matrix_normalizers():
    reads = []

    def block(a: int, b: int) -> np.ndarray:
        reads.append((a, b))
        return HUB[:, a:b]

    blocked = balance(block, 3, 3, Hubness(), cells=3)  # 3 values a block: one item at a time
    assert blocked.normalizers == pytest.approx(item_normalizers(HUB, Hubness()), abs=1e-6)
    assert len(reads) == 3 * (1 + Hubness().iterations)  # every block read once per pass, rows first


def test_the_kept_row_scalers_score_an_item_as_the_balance_did():
    full = balance(lambda a, b: HUB[:, a:b], 3, 3, Hubness())
    # the columns step alone, with the balance's last rows: each item's own normalizer back
    assert column_normalizers(HUB, full.rows, Hubness()) == pytest.approx(full.normalizers, abs=1e-6)
    # an item added later, scored like item 0 by every query, gets item 0's normalizer; a weaker one a lower one
    later = column_normalizers(np.c_[HUB[:, :1], HUB[:, :1] - 0.1], full.rows, Hubness())
    assert later[0] == pytest.approx(full.normalizers[0], abs=1e-6) and later[1] == pytest.approx(later[0] - 0.1)
    assert not column_normalizers(HUB, full.rows, Hubness(0.0)).any()


def test_off_is_the_plain_score():
    assert not item_normalizers(HUB, Hubness(0.0)).any()
    assert np.array_equal(pool_corrected(HUB, Hubness(0.0)), HUB)
    assert item_normalizers(np.zeros((0, 3)), Hubness()).tolist() == [0.0, 0.0, 0.0]


def test_the_bank_is_every_item_up_to_its_limit_at_any_size():
    assert bank_rows(5).tolist() == [0, 1, 2, 3, 4] and bank_rows(0).size == 0
    big = bank_rows(10_000)
    assert len(big) == 2048 and (big[0], big[-1]) == (0, 9999) and (np.diff(big) > 0).all()
    assert len(bank_rows(400_000)) == 2048  # the matrix is balanced in blocks, so the bank no longer shrinks


def test_models_saved_before_it_score_without_it():
    assert MatcherConfig().hubness().on
    older = {k: v for k, v in MatcherConfig().to_dict().items() if not k.startswith("hub_")}
    assert not MatcherConfig.from_dict(older).hubness().on
