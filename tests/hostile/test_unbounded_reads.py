"""Every file the CLI reads has a size cap: `/dev/zero` is a one-line exit 2, in bounded time
and memory (it used to grow to 22 GB and take other processes down with it). Nothing is timed:
the error names the cap the read stopped at, and the address space is capped below what an
uncapped read would need (it would fail with a MemoryError instead)."""

from __future__ import annotations

import pytest
from hostile_cli import sb

from stores.files import TooLarge, read_capped


def test_read_capped_reads_no_more_than_the_cap_plus_one(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_capped(path, 10) == b"x" * 10
    with pytest.raises(TooLarge, match="larger than 9 bytes"):
        read_capped(path, 9)
    with pytest.raises(TooLarge):
        read_capped("/dev/zero", 1000)


@pytest.mark.slow
@pytest.mark.parametrize("args,said", [
    (("run", "datasets/canonical/health-bands.yaml", "--config", "/dev/zero"), "/dev/zero: cannot read: larger than 1,000,000 bytes"),
    (("run", "datasets/canonical/health-bands.yaml", "--policy-config", "/dev/zero"), "/dev/zero: cannot read: larger than 1,000,000 bytes"),
    (("check", "latest", "--baseline", "/dev/zero"), "/dev/zero: not a readable JSON baseline: larger than 64,000,000 bytes"),
    (("validate", "/dev/zero"), "/dev/zero: not a regular file or a folder"),
])
def test_dev_zero_is_refused_in_bounded_time_and_memory(args, said, tmp_path):
    if args[0] == "check":  # a run to check, so the baseline is what is read
        from harness.cli import main as cli

        assert cli(["run", "datasets/canonical/decision-meaningless.yaml", "-s", "empty", "-q", "--out", str(tmp_path)]) == 0
    p = sb(*args, memory_mb=2500, SUPPORTBENCH_RUNS=str(tmp_path))
    assert p.returncode in (1, 2), (p.returncode, p.stderr)
    assert said in p.stderr + p.stdout and "Traceback" not in p.stderr


def test_a_missing_scenario_path_is_unusable_input_exit_2(tmp_path, capsys):
    from harness.cli import main as cli

    for args in (["validate", str(tmp_path / "nope.yaml")], ["run", str(tmp_path / "nope"), "-s", "empty", "-q"]):
        with pytest.raises(SystemExit) as e:
            cli(args)
        assert e.value.code == 2
        assert f"error: {tmp_path / 'nope'}" in capsys.readouterr().err
