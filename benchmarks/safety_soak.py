"""The safety harness's long run: ``tests/e2e/safety_model.py``'s machine for many more steps.

    .venv/bin/python -m benchmarks.safety_soak --steps 200000
    .venv/bin/python -m benchmarks.safety_soak --steps 50000 --watch no --seed 7
    .venv/bin/python -m benchmarks.safety_soak --shrink inv3-file --watch yes

Runs the same ``SafetyMachine`` as ``tests/e2e/test_safety_model.py``, in collecting mode: a
violation is counted by kind (its first occurrence kept with the steps that led to it), the
machine's model is resynchronised and the run goes on, so one bug does not hide the others.
With ``--shrink KIND`` it stops at the first violation of that kind instead and prints it
shrunk to a minimal sequence of steps. Examples are generated (not shrunk) in chunks with seeds
``seed, seed+1, …`` until ``--steps`` are done; ``--watch both`` alternates the watched and the
unwatched workbench per chunk. It prints the step count, the time, the edit outcomes, the
fault-hook calls and every violation kind; the exit code is 1 when there was any violation.
"""

from __future__ import annotations

import argparse
import sys
import time

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.e2e.safety_model import Report, safety_machine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200_000, help="random steps in all")
    parser.add_argument("--watch", choices=("yes", "no", "both"), default="both")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first chunk")
    parser.add_argument("--chunk", type=int, default=25, help="examples per chunk")
    parser.add_argument("--step-count", type=int, default=200, help="steps per example (max)")
    parser.add_argument("--hang", type=float, default=20.0, help="seconds before a call hangs")
    parser.add_argument(
        "--hang-after-first",
        type=float,
        default=3.0,
        help="the same, once one hang was seen (they repeat)",
    )
    parser.add_argument(
        "--shrink",
        metavar="KIND",
        help="stop at the first violation of a kind starting with KIND and shrink "
        "it to a minimal sequence of steps (printed), instead of collecting",
    )
    args = parser.parse_args(argv)

    report = Report(
        strict=args.shrink is not None,
        only=args.shrink,
        hang_s=args.hang,
        hang_after_first_s=args.hang_after_first,
    )
    modes = {"yes": [True], "no": [False], "both": [True, False]}[args.watch]
    began = time.monotonic()
    chunk = 0
    while report.steps < args.steps:
        watch = modes[chunk % len(modes)]
        machine = safety_machine(report, watch=watch)
        config = settings(
            max_examples=args.chunk,
            stateful_step_count=args.step_count,
            deadline=None,
            database=None,
            phases=[Phase.generate] + ([Phase.shrink] if args.shrink else []),
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
        )
        seed(args.seed + chunk)(machine)  # run_state_machine_as_test reads it from here
        try:
            run_state_machine_as_test(machine, settings=config)
        except AssertionError as exc:
            if args.shrink is None:
                raise
            print(f"\nshrunk {args.shrink} (watch={watch}):\n{exc}")
            return 1
        except Exception as exc:  # noqa: BLE001 - e.g. hypothesis's Flaky: count and go on
            report.violations[f"harness-{type(exc).__name__}"] += 1
            report.first.setdefault(f"harness-{type(exc).__name__}", str(exc)[:2000])
        chunk += 1
        elapsed = time.monotonic() - began
        print(
            f"chunk {chunk} (watch={watch}, seed {args.seed + chunk - 1}): "
            f"{report.steps} steps, {elapsed:.0f} s, "
            f"{sum(report.violations.values())} violations {dict(report.violations)}",
            flush=True,
        )
    elapsed = time.monotonic() - began
    print(f"\n{report.steps} steps in {elapsed:.1f} s ({report.steps / elapsed:.0f} steps/s)")
    print(report.summary())
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
