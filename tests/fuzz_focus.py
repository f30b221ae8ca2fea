"""Checks shared by the tests of the fuzzer's feature families (``test_fuzz_habits.py``,
``test_fuzz_estimation.py``): each feature's focused programs exercise it, and one is checked by
``fuzz.check_program`` (reverse vs forward vs differences vs hvp) and is right or refused by name.
``salt`` tells one file's draws from another's (``fuzz.focused_case``)."""
from yuebing.testing import fuzz
from yuebing.testing.fuzz_programs import features_in


def assert_focused_programs_exercise(feature: str, salt: int, seeds: int = 5) -> None:
    for seed in range(seeds):
        program, _, _ = fuzz.focused_case(feature, seed, salt)
        assert feature in features_in(program.source()), program.source()


def assert_focused_program_never_wrong(feature: str, salt: int) -> None:
    program, args, rng = fuzz.focused_case(feature, 0, salt)
    _, outcome = fuzz.check_at_points(program, args, rng)
    assert outcome.status in ("right", "refused", "unsmooth"), str(outcome)
