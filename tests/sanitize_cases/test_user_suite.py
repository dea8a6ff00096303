"""A user's own tests of the three memos (run by tests/test_sanitize.py under the sanitizer)."""

import id_memo
import ptr_memo
import weak_memo


def test_id_memo_serves():
    assert len(id_memo.serve(["red", "blue", "green"])) == 3


def test_ptr_memo_serves():
    assert len(ptr_memo.serve(["red", "blue", "green", "gold"])) == 4


def test_weak_memo_serves():
    assert len(weak_memo.serve(["red", "blue", "green", "gold"])) == 4
