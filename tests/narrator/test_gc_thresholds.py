"""A worker's cyclic garbage collector runs less often (issue 14): at 1,500
phones each full collection stopped the worker for 200-400 ms."""

from __future__ import annotations

import gc

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from narrator.settings import gc_thresholds


def test_a_worker_collects_at_the_configured_thresholds():
    import narrator.asgi  # noqa: F401 - the worker's entry point sets them on import

    assert settings.GC_THRESHOLDS == (50000, 20, 10)
    assert gc.get_threshold() == settings.GC_THRESHOLDS


@pytest.mark.parametrize(
    ("value", "thresholds"), [("50000,20,10", (50000, 20, 10)), (" 700, 10 ,10", (700, 10, 10))]
)
def test_thresholds_are_read_from_three_numbers(value, thresholds):
    assert gc_thresholds(value) == thresholds


@pytest.mark.parametrize("value", ["", "50000,20", "50000,20,10,5", "a,b,c", "0,10,10", "-1,10,10"])
def test_other_thresholds_are_refused_with_a_clear_error(value):
    with pytest.raises(ImproperlyConfigured, match="GC_THRESHOLDS must be three whole numbers"):
        gc_thresholds(value)
