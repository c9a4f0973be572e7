"""The command line builds only the subcommand it is given (a `run` does not import what `report`,
`failures` or `generate` need), and that parser reads its arguments as the whole one does."""

import subprocess
import sys

import pytest

from harness.cli import COMMANDS, build_parser, command_of, main


def test_every_command_is_named_as_its_module_registers_it():
    whole = build_parser()
    assert list(whole._subparsers._group_actions[0].choices) == list(COMMANDS)
    for name in COMMANDS:
        assert list(build_parser(name)._subparsers._group_actions[0].choices) == [name]


@pytest.mark.parametrize("argv", [
    ["run", "datasets/canonical", "--strategies", "tfidf", "--policies", "none", "--workers", "2"],
    ["report", "some-run", "--format", "json"],
    ["import", "locomo", "x.json", "--out", "d", "--budget", "900"],
    ["ls", "strategies"],
])
def test_the_one_command_parser_reads_what_the_whole_one_reads(argv):
    one = vars(build_parser(command_of(argv)).parse_args(argv))
    whole = vars(build_parser().parse_args(argv))
    assert {k: v for k, v in one.items() if k != "func"} == {k: v for k, v in whole.items() if k != "func"}
    assert one["func"].__module__ == whole["func"].__module__


def test_an_unknown_command_or_none_lists_every_choice(capsys):
    assert command_of(["rn"]) is None and command_of([]) is None and command_of(["--help"]) is None
    with pytest.raises(SystemExit) as e:
        main(["rn"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert all(f"'{name}'" in err for name in COMMANDS)


def test_a_run_does_not_import_what_other_commands_need():
    code = ("import sys; from harness.cli import build_parser, command_of; "
            "build_parser(command_of(['run'])); "
            "print(sorted(m for m in ('pandas', 'harness.generate', 'harness.analysis.failures') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_quiet_run_without_policies_does_not_import_what_it_does_not_use(tmp_path):
    """A `--quiet` tfidf run with `--policies none` loads no progress bar, no decision layer, no
    expiry stage and no torch (they are imported where they are used)."""
    scenario = sorted(__import__("pathlib").Path("datasets/canonical").glob("*.yaml"))[0]
    code = ("import sys; from harness.cli import main\n"
            f"try:\n    main(['run', {str(scenario)!r}, '--strategies', 'tfidf', '--policies', 'none', '--quiet', "
            f"'--out', {str(tmp_path)!r}, '--run-id', 'r'])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in ('rich.progress', 'harness.replay.decide', 'stores.decisions.decision', "
            "'stores.expiry', 'torch', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "r").is_dir()
