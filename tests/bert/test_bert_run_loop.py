"""The run skeleton alone, with an objective that counts: its stops, its time budget, its clock and its divergence check."""
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from tokkit.bert import run_loop as loop  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402


class Bar:
    enabled = False

    def close(self):
        pass


class Counting(loop.Objective):
    """`steps` steps of `seconds` each, the losses given; records what followed each step."""

    def __init__(self, steps, seconds=1.0, losses=None, first=False):
        self.steps, self.seconds, self.losses, self.seen = steps, seconds, losses or {}, []
        self.checks_time_first = first

    def more(self, run):
        return run.step < self.steps

    def step(self, run):
        run.train_time += self.seconds
        return loop.timed_step(run, lambda: {}, 0.5, lambda batch: {"loss": self.losses.get(run.step, 1.0)})

    def after_step(self, run, stats, *, over, timed):
        self.seen.append((run.step, over, timed))

    def finish(self, run):
        return {"steps": run.step}


def run_of(max_time=None, every=None, train_time=0.0):
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.SGD([{"params": model.parameters(), "lr_scale": 0.5}], lr=1.0)
    cfg = SimpleNamespace(max_time=max_time, eval_every_seconds=every)
    return loop.Run(cfg, Path("unused"), None, torch.device("cpu"), 0, 1, model, model, opt, train_time=train_time,
                    bar=Bar())


def test_steps_until_the_objective_has_none_left_each_groups_lr_scaled():
    run, objective = run_of(), Counting(3)
    assert loop.execute(run, objective) == {"steps": 3}
    assert [s for s, _, _ in objective.seen] == [1, 2, 3]
    assert run.opt.param_groups[0]["lr"] == 0.25


def test_the_time_budget_stops_after_the_step_that_spends_it():
    run, objective = run_of(max_time=2.0), Counting(10)
    loop.execute(run, objective)
    assert objective.seen == [(1, False, False), (2, True, False)]


def test_a_run_begun_past_its_budget_takes_no_step_only_when_the_objective_says_so():
    for first, steps in ((True, 0), (False, 1)):
        run = run_of(max_time=2.0, train_time=5.0)
        loop.execute(run, Counting(10, first=first))
        assert run.step == steps


def test_timed_evaluations_come_each_time_training_time_passes_a_multiple():
    run, objective = run_of(every=2.5), Counting(6)
    loop.execute(run, objective)
    assert [s for s, _, timed in objective.seen if timed] == [3, 5]


def test_a_loss_that_is_not_finite_ends_the_run_naming_the_step():
    with pytest.raises(TokkitError, match=r"training diverged at step 2: the loss is nan \(try a lower --lr\)"):
        loop.execute(run_of(), Counting(5, losses={1: float("nan")}))


def test_the_clock_starts_after_the_time_a_resumed_run_has_trained():
    clock = loop.Clock(every=10.0, now=25.0)
    assert [clock.passed(t) for t in (29.0, 30.0, 31.0, 40.5)] == [False, True, False, True]
    assert not loop.Clock(None, 0.0).passed(1e9)
