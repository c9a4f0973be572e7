"""Regenerate docs/results/: every leaderboard and benchmark printout the docs quote (`make results`).

    python bench/results.py                    # the default generators (a few minutes on 2 cores)
    python bench/results.py --heavy            # also the heavy ones (benches, large suites: up to an hour)
    python bench/results.py canonical bench-scale   # the ones named
    python bench/results.py --list             # what there is, and which are heavy

Each generator writes `docs/results/<name>.md`: a header saying what it is, the commands that made
it, the run ids, the load average before and after (and the cores), the date, the git commit and
how long it took, then the output verbatim (a report's markdown as is, a bench's printout as a
text block). Runs go to a temporary folder removed at the end; a file is replaced in one rename,
only when every command of its generator succeeded (otherwise the old file stays and the exit
code is 1). A generator that needs a service it is not given (`needs`, e.g. `HINDSIGHT_URL`) is
skipped, saying so. The files are never edited by hand.

Adding a generator: append one `Generator` to `GENERATORS` (a name, a title, the steps; `heavy`
when it takes more than a few minutes). In a step, `supportbench` and `python` are this
interpreter, `{runs}` the temporary runs folder and `{id}` the generator's run id.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "results"


@dataclass(frozen=True)
class Step:
    command: str
    """The command as a reader would type it (`supportbench ...`, `python bench/...`)."""
    shown: str = ""
    """How its output goes into the file: `md` (as is), `text` (a text block), or "" (not shown)."""


@dataclass(frozen=True)
class Generator:
    name: str
    """The file's name (`docs/results/<name>.md`) and the command line's."""
    title: str
    """The file's heading: what the numbers are."""
    steps: tuple[Step, ...]
    heavy: bool = False
    """Left out of `make results` unless asked for (`make results-heavy`, `--heavy`, or by name)."""
    needs: str = ""
    """An environment variable that must be set (a service's URL), else the generator is skipped."""
    note: str = ""
    """A sentence under the heading: how to read it, where the prose about it is."""
    own: bool = False
    """Its one step writes the whole file itself (`--out {out}`), with its own header of run ids,
    commands and load: the bench scripts that stamp their own pages."""


def frontends_on(name: str, folder: str, which: str, about: str, repeats: int) -> Generator:
    """`frontends-<name>`: bench/frontends.py with `folder` as its challenge suite (`which`, in the
    title), `about` what that text is to the front ends (the page's default, never trained on, when
    empty), `repeats` rounds (the script's default when 0)."""
    command = (f"python bench/frontends.py --challenge {folder}" + (f" --about '{about}'" if about else "")
               + (f" --repeats {repeats}" if repeats else "") + " --out {out}")
    return Generator(f"frontends-{name}", f"Front ends: rules against learned, canonical and {which}",
                     (Step(command),), heavy=True, own=True)


GENERATORS: tuple[Generator, ...] = (
    Generator("canonical", "Leaderboard: the canonical suite", (
        Step("supportbench run datasets/canonical --out {runs} --run-id {id} --quiet"),
        Step("supportbench report {runs}/{id} --format md --all", "md"),
    ), note="Every default strategy, the two controls (`--all`) and both decision policies. Each cell is the mean "
            "over cases with its 95 % bootstrap interval over scenarios; how to read it: [../criteria.md](../criteria.md)."),
    Generator("canonical-expiry", "The canonical suite behind the expiry stage (what `make check` gates)", (
        Step("supportbench run datasets/canonical --strategies default --config baselines/ci-strategies.toml "
             "--out {runs} --run-id {id} --quiet"),
        Step("supportbench report {runs}/{id} --format md", "md"),
    ), note="The default strategies and each memory strategy behind the expiry stage (`baselines/ci-strategies.toml`), "
            "the run `make check` compares with `baselines/canonical.json`; the stage: [../reference.md](../reference.md)."),
    Generator("precedence", "The decision resolver's precedence", (
        Step("python -m stores.decisions.resolver", "md"),
    ), note="`PRECEDENCE` in `stores/decisions/resolver.py`, as `resolve` walks it: first match wins, the most "
            "protective rule first; the numbers in brackets are the defaults of `session_state`'s thresholds. "
            "How the rules fit together: [../decisions.md](../decisions.md)."),
    Generator("signals", "The turn signals a scenario may script", (
        Step("python -m stores.decisions.signals", "md"),
    ), note="`TURN_SIGNALS` in `stores/decisions/signals.py`, from which the scenario format's `signals:` model and "
            "JSON Schema are built: a key given on a turn replaces that producer's reading for that key only. "
            "The format: [../scenario-format.md](../scenario-format.md); the producers: [../decisions.md](../decisions.md)."),
    Generator("generated-200", "Leaderboard: a generated suite of 200 customers", (
        Step("supportbench generate --customers 200 --seed 0 --out {runs}/c200"),
        Step("supportbench run {runs}/c200 --workers 2 --policies none --out {runs} --run-id {id} --quiet"),
        Step("supportbench report {runs}/{id} --format md --all", "md"),
    ), heavy=True, note="The generator's realistic profile; suites: [../scale.md](../scale.md)."),
    Generator("products", "Leaderboard: the products on the canonical suite", (
        Step("supportbench run datasets/canonical --strategies embedding,mem0,hindsight --policies none "
             "--out {runs} --run-id {id} --quiet"),
        Step("supportbench report {runs}/{id} --format md", "md"),
    ), heavy=True, needs="HINDSIGHT_URL",
        note="mem0 runs offline in process; Hindsight is a local server (`make hindsight`, then "
             "`HINDSIGHT_URL=http://127.0.0.1:8888 make results-heavy`). `embedding` is the reference: mem0's embedder."),
    Generator("bench-strategies", "Latency per history length, and the health report's cost per event", (
        Step("python bench/strategies.py", "text"),), heavy=True),
    Generator("bench-scale", "Throughput of large generated suites, and workers", (
        Step("python bench/scale.py --customers 200 --speedup-customers 200 --embed-customers 50", "text"),), heavy=True,
        note="A 200-customer suite (the speedup on the same files, embeddings on 50 customers): the script's defaults "
             "(1,000 customers, where the 120 s throughput goal is set; 400 for the speedup, 150 for embeddings) run "
             "several whole passes over 1,000 customers, longer than a results page should take on 2 shared cores, so "
             "this page does not check the 120 s goal; `python bench/scale.py` does. "
             "How to read it: [../scale.md](../scale.md)."),
    Generator("bench-expiry-stage", "The expiry stage's cost on a long history", (
        Step("python bench/expiry_stage.py", "text"),), heavy=True,
        note="How to read it: [../expiry.md](../expiry.md) (what it costs)."),
    Generator("bench-profile-run", "The shares of a worker's run (replay, idempotency replays, health, scoring)", (
        Step("python bench/profile_run.py --cprofile", "text"),), heavy=True, note="How to read it: [../scale.md](../scale.md)."),
    Generator("bench-long-history", "One long history: whole runs, and one customer with 20,000 events", (
        Step("python bench/long_history.py --long-events 20000", "text"),), heavy=True,
        note="Part 2 runs 20,000 events, not the script's default of 100,000: the 100,000-event run "
             "(`python bench/long_history.py --skip compare --limit 1200`) takes longer than a results page should on "
             "2 shared cores. How to read it: [../scale.md](../scale.md#one-very-long-history)."),
    Generator("app_speed", "The app in a browser: first Leaderboard paint and a row click to its case", (
        Step("python bench/app_speed.py --fixture --repeat 3 --clicks 4 --out {out}"),), heavy=True, own=True),
    Generator("trends_speed", "Distributions and trends: first paint and repaint per run of a suite", (
        Step("python bench/trends_speed.py --generated 40 --counts 1,5,10,20 --repeat 3 --out {out}"),), heavy=True, own=True),
    Generator("embedding-load", "The embedding path beside a busy neighbour", (
        Step("python bench/embedding_load.py --rounds 3 --out {out}"),), heavy=True, own=True),
    Generator("demo-time", "`make demo` from a fresh clone to the app's first page", (
        Step("python bench/demo_time.py --out {out}"),), heavy=True, own=True),
    Generator("frontends", "Front ends: rules against learned, canonical and challenge", (
        Step("python bench/frontends.py --repeats 3 --out {out}"),), heavy=True, own=True),
    *(frontends_on(name, folder, which, about, repeats) for name, folder, which, about, repeats in (
        ("holdout", "datasets/challenge_holdout", "the held-out challenge suite",
         "written blind by another engineer, measured as held-out text in earlier rounds; development text since the "
         "fourth round: its misses were studied while the front ends changed", 3),
        ("holdout2", "datasets/challenge_holdout2", "the second held-out challenge suite",
         "written blind by another engineer, measured as held-out text after the third round; development text since the "
         "fourth round: its misses were studied while the front ends changed", 3),
        ("holdout3", "datasets/challenge_holdout3", "the third held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the fourth round; development text "
         "since the fifth round: its misses were studied while the floor changed", 3),
        ("holdout4", "datasets/challenge_holdout4", "the fourth held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the fifth round; development text "
         "since the sixth round: its misses were studied while the floor and the memory classes changed", 3),
        ("holdout5", "datasets/challenge_holdout5", "the fifth held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the sixth round; development text "
         "since the seventh round: its misses were studied while the floor, the decisions and the memory classes changed", 3),
        ("holdout6", "datasets/challenge_holdout6", "the sixth held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the seventh round; development text "
         "since the eighth round: its misses were studied while the floor, the decisions and the memory classes changed", 3),
        ("holdout7", "datasets/challenge_holdout7", "the seventh held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the eighth round; development text "
         "since the ninth round: its misses were studied while the front ends changed", 3),
        ("holdout8", "datasets/challenge_holdout8", "the eighth held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the ninth round; development text "
         "since the tenth round: its misses were studied while the front ends changed", 3),
        ("holdout9", "datasets/challenge_holdout9", "the ninth held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the tenth round; development text "
         "since the eleventh round: its misses were studied while the front ends changed", 3),
        ("holdout10", "datasets/challenge_holdout10", "the tenth held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the eleventh round; development "
         "text since the twelfth round: its misses were studied while the front ends changed", 3),
        ("holdout11", "datasets/challenge_holdout11", "the eleventh held-out challenge suite",
         "written blind by another engineer, measured once as held-out text after the twelfth round; development "
         "text since: its misses are studied while the front ends change", 3),
        ("extraction-dev", "tests/data/extraction_dev", "the extraction development set",
         "development text of the extractor, written for it and looked at while its reading was changed (the second "
         "file in the fourth round, after part of the change): in sample", 0))),
    Generator("controls", "The controls' promise: oracle, empty and the shortcut controls on every suite", (
        Step("python bench/controls.py --seed 41 --beside structured:front=rules --out {out}"),), heavy=True, own=True),
    Generator("external-data", "Leaderboards on LoCoMo and a LongMemEval-layout file", (
        Step("python bench/external.py --locomo $SUPPORTBENCH_LOCOMO --out {out}"),), heavy=True, own=True,
        needs="SUPPORTBENCH_LOCOMO"),
    Generator("session-ranking", "Evidence recall on LoCoMo's test split beside a plain BM25 and MiniLM, and the canonical suite", (
        Step("python bench/locomo_retrieval.py $SUPPORTBENCH_LOCOMO_TEST --label 'test split (the 8 conversations other "
             "than 26 and 30), reported once' --canonical --out {out}"),), heavy=True, own=True,
        needs="SUPPORTBENCH_LOCOMO_TEST"),
    Generator("locomo-dev", "Evidence recall on LoCoMo's development split (conversations 26 and 30), what the ranking was tuned on", (
        Step("python bench/locomo_retrieval.py $SUPPORTBENCH_LOCOMO_DEV --label 'development split (conversations 26 and 30), "
             "what the ranking was tuned on' --out {out}"),), heavy=True, own=True, needs="SUPPORTBENCH_LOCOMO_DEV"),
    Generator("locomo-cost", "The cost of a LoCoMo run against a plain BM25 process", (
        Step("python bench/locomo_cost.py $SUPPORTBENCH_LOCOMO_TEST --repeat 3 --out {out}"),), heavy=True, own=True,
        needs="SUPPORTBENCH_LOCOMO_TEST"),
)
"""Every generator, in the order `--list` shows them; the light ones are `make results`."""


def command_line(script: str, argv: list[str]) -> str:
    """How a bench was called, for its page: `python bench/<script> ...`, an absolute path given
    as an argument shown by its last part (a page never names a folder of the machine it ran on)."""
    return f"python bench/{script} " + shlex.join(Path(a).name if os.path.isabs(a) else a for a in argv)


def emit(text: str, out: Path | None) -> None:
    """A bench's page: printed, and with `--out` written there too (its folder made): what the
    generators marked `own` leave in `docs/results/`."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


def _argv(command: str, runs: Path, run_id: str, out: Path | None = None) -> list[str]:
    words = [os.path.expandvars(w) for w in shlex.split(command.format(runs=runs, id=run_id, out=out))]
    if words[0] == "supportbench":
        return [sys.executable, "-m", "harness.cli", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    return words


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} (1 min), {five:.2f} (5 min), {fifteen:.2f} (15 min)"


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def generate(g: Generator, scratch: Path) -> str:
    """The file's text for `g`, running its steps in `scratch` (RuntimeError naming a failing step)."""
    run_id = f"{g.name}-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}"
    if g.own:  # the bench stamps its own page: run it, keep what it wrote
        out = scratch / f"{g.name}.md"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        for step in g.steps:
            p = subprocess.run(_argv(step.command, scratch, run_id, out), cwd=ROOT, env=env, capture_output=True, text=True)
            if p.returncode != 0 or not out.is_file():
                raise RuntimeError(f"{g.name}: `{step.command}` exited {p.returncode}: {p.stderr.strip()[-800:]}")
        return out.read_text()
    before, started, t0, commit = _load(), datetime.now(timezone.utc), time.monotonic(), _commit()  # the tree it ran on
    shown = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for step in g.steps:
        p = subprocess.run(_argv(step.command, scratch, run_id), cwd=ROOT, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{g.name}: `{step.command}` exited {p.returncode}: {p.stderr.strip()[-800:]}")
        out = p.stdout.replace(str(scratch), "<runs>").rstrip()
        if step.shown == "md":
            shown.append(out.replace(f"# supportbench report: run {run_id}", f"Run `{run_id}`:", 1))
        elif step.shown == "text":
            shown.append(f"```text\n{out}\n```")
    took = time.monotonic() - t0
    commands = "\n".join(f"    {s.command.replace('{runs}', '<runs>').replace('{id}', run_id)}" for s in g.steps)
    head = [
        f"# {g.title}",
        "",
        f"Generated by `make results` (`python bench/results.py {g.name}`): never edited by hand.",
        *([f"\n{g.note}"] if g.note else []),
        "",
        f"- run id: `{run_id}`" if any("{id}" in s.command for s in g.steps) else "- run id: none (a bench)",
        f"- load average: {before} before; {_load()} after, on {os.cpu_count()} cores",
        f"- started {started:%Y-%m-%d %H:%M} UTC at commit `{commit}`; took {took:.0f} s",
        "",
        "Commands (`<runs>` a temporary folder):",
        "",
        commands,
        "",
    ]
    return "\n".join(head) + "\n" + "\n\n".join(shown) + "\n"


def write(path: Path, text: str) -> None:
    """Replace `path` in one rename: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def chosen(names: list[str], heavy: bool) -> list[Generator]:
    known = {g.name: g for g in GENERATORS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown generator(s) {unknown}; known: {', '.join(known)}")
    return [known[n] for n in names] if names else [g for g in GENERATORS if heavy or not g.heavy]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="generators to run (default: every light one)")
    ap.add_argument("--heavy", action="store_true", help="also the heavy generators")
    ap.add_argument("--list", action="store_true", help="list the generators and exit")
    ap.add_argument("--out", type=Path, default=OUT, help="folder of the files (default docs/results)")
    args = ap.parse_args(argv)
    if args.list:
        for g in GENERATORS:
            print(f"{g.name:<20} {'heavy' if g.heavy else 'light':<6} {g.title}" + (f" (needs {g.needs})" if g.needs else ""))
        return 0
    failed = 0
    with tempfile.TemporaryDirectory(prefix="supportbench-results-") as tmp:
        for g in chosen(args.names, args.heavy):
            if g.needs and not os.environ.get(g.needs):
                print(f"skipped {g.name}: {g.needs} is not set", file=sys.stderr)
                continue
            scratch = Path(tmp) / g.name
            scratch.mkdir()
            try:
                text = generate(g, scratch)
            except RuntimeError as e:
                print(f"failed: {e}", file=sys.stderr)
                failed += 1
                continue
            write(args.out / f"{g.name}.md", text)
            print(f"wrote {(args.out / f'{g.name}.md').relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out / g.name}")
        write_index(args.out)
    return 1 if failed else 0


def write_index(out: Path) -> None:
    """`index.md`: every generator, its command and whether its file is here; a generator never run
    in this tree gets a file saying so (the docs link every one), never invented numbers."""
    rows = []
    for g in GENERATORS:
        path = out / f"{g.name}.md"
        if not path.exists():
            write(path, f"# {g.title}\n\nNot generated in this tree yet: `python bench/results.py {g.name}`"
                        f"{' (heavy: `make results-heavy`)' if g.heavy else ''}"
                        f"{f', with `{g.needs}` set' if g.needs else ''} writes it.\n")
        generated = "Not generated" not in path.read_text()
        rows.append(f"| [{g.name}.md]({g.name}.md) | {g.title} | {'heavy' if g.heavy else 'light'} | "
                    f"{'yes' if generated else 'not yet'} |")
    write(out / "index.md", "# Generated results\n\nEvery file here is written by `make results` "
          "(`python bench/results.py`; `make results-heavy` adds the heavy ones), stamped with its run ids, "
          "commands and load average, and never edited by hand. To add one, append a `Generator` to "
          "`GENERATORS` in `bench/results.py`.\n\n| file | what | cost | generated |\n| --- | --- | --- | --- |\n"
          + "\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
