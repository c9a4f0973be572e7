"""`supportbench validate`: check scenario files before any run."""

from __future__ import annotations

from harness.cli.common import DEFAULT_SUITE, console, exit_if_missing, out


def register(sub) -> None:
    p = sub.add_parser("validate", help="validate scenario files (exit 0 valid, 1 invalid, 2 a path that does not exist)")
    p.add_argument("paths", nargs="*", help="files or folders (default: datasets/canonical)")
    p.set_defaults(func=main)


def main(args) -> int:
    from harness.format.loader import validate_paths

    paths = args.paths or [str(DEFAULT_SUITE)]
    exit_if_missing(paths)  # exit 2: nothing to validate is unusable input, not an invalid scenario
    issues = validate_paths(paths)
    if issues:
        for i in issues:
            out.print(str(i), markup=False)
        console.print(f"{len(issues)} problem(s) in {len({i.file for i in issues})} file(s)")
        return 1
    console.print(f"ok: {', '.join(paths)} valid")
    return 0
