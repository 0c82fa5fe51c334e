"""The one timing helper: the round schedule, alternation, warm-ups, medians and ratio lines, on a fake clock."""
import math

import pytest

from tokkit.bench.timing import median, medians, ratio_line, round_order, time_calls, timed_once, turns


class FakeClock:
    """A clock that each contender's call advances by that contender's own cost."""

    def __init__(self, costs):
        self.now, self.costs, self.calls = 0.0, costs, []

    def __call__(self):
        return self.now

    def call(self, name):
        def run():
            self.calls.append(name)
            self.now += self.costs[name].pop(0) if isinstance(self.costs[name], list) else self.costs[name]
        return run


def test_contenders_alternate_after_a_warm_up_round_and_the_warm_up_is_not_kept():
    clock = FakeClock({"a": [100.0, 1.0, 3.0, 2.0], "b": 5.0})
    res = time_calls({"a": clock.call("a"), "b": clock.call("b")}, rounds=3, clock=clock)
    assert clock.calls == ["a", "b"] * 4
    assert res["a"].times == [1.0, 3.0, 2.0]  # the 100 s warm-up is dropped
    assert res["a"].median == 2.0 and medians(res) == {"a": 2.0, "b": 5.0}


def test_blocks_open_with_untimed_runs_and_reverse_swaps_every_other_round():
    sched = list(turns(["a", "b"], rounds=2, warmup=0, block=2, block_warmup=1, order="reverse"))
    assert [n for _, n, _ in sched] == ["a"] * 3 + ["b"] * 3 + ["b"] * 3 + ["a"] * 3
    assert [t for _, _, t in sched[:3]] == [False, True, True]
    assert {r for r, _, t in sched if t} == {1, 2}


def test_rotate_gives_each_contender_the_lead_in_turn():
    assert [round_order(list("abc"), r, "rotate")[0] for r in range(3)] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="order must be one of"):
        round_order(["a"], 0, "random")


def test_cpu_seconds_and_pauses_use_the_clocks_given():
    clock, cpu, slept = FakeClock({"a": 2.0}), iter([0.0, 0.5, 1.0, 1.75]), []
    res = time_calls({"a": clock.call("a")}, rounds=2, warmup=0, cpu=True, pause=0.1, clock=clock,
                     cpu_clock=lambda: next(cpu), sleep=slept.append)
    assert res["a"].cpu_times == [0.5, 0.75] and res["a"].cpu_median == 0.625
    assert slept == [0.1, 0.1]


def test_progress_lines_name_the_round():
    clock, log = FakeClock({"a": 1.0}), []
    time_calls({"a": clock.call("a")}, rounds=1, clock=clock, log=log.append)
    assert log == ["  warm-up: a: 1.000 s", "  round 1: a: 1.000 s"]


def test_median_of_nothing_is_nan_and_ratio_lines_judge_the_target():
    assert math.isnan(median([]))
    assert timed_once(lambda: 7, clock=iter([1.0, 4.0]).__next__) == (3.0, 7)
    assert "met" in ratio_line("ref", 3.0, 1.0, work=6, unit="MB/s", target=2.0)
    assert "MISSED" in ratio_line("ref", 1.5, 1.0, target=2.0)
    assert "x faster" not in ratio_line("tokkit", 1.0, 1.0)
