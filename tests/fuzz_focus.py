"""The tests every family of the fuzzer's features gets (``test_fuzz_habits.py``,
``test_fuzz_estimation.py``): the family is on by default, each feature's focused programs
exercise it, and one is checked by ``fuzz.check_program`` (reverse vs forward vs differences vs
hvp) and is right or refused by name. ``salt`` tells one file's draws from another's
(``fuzz.focused_case``)."""
import pytest

from yuebing.testing import fuzz
from yuebing.testing.fuzz_programs import DEFAULT_FEATURES, features_in


def family_tests(features: tuple[str, ...], salt: int) -> tuple:
    """The three test functions of a family; a test module binds them to names beginning with
    ``test_`` for pytest to collect."""
    def test_the_family_is_on_by_default():
        assert set(features) <= set(DEFAULT_FEATURES)

    @pytest.mark.parametrize("feature", features)
    def test_focused_programs_exercise_their_feature(feature):
        for seed in range(5):
            program, _, _ = fuzz.focused_case(feature, seed, salt)
            assert feature in features_in(program.source()), program.source()

    @pytest.mark.parametrize("feature", features)
    def test_a_focused_program_is_never_wrong(feature):
        program, args, rng = fuzz.focused_case(feature, 0, salt)
        _, outcome = fuzz.check_at_points(program, args, rng)
        assert outcome.status in ("right", "refused", "unsmooth"), str(outcome)

    return test_the_family_is_on_by_default, test_focused_programs_exercise_their_feature, \
        test_a_focused_program_is_never_wrong
