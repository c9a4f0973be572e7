"""`supportbench ls strategies|policies|scenarios|criteria|runs`.

Strategies, policies and criteria say where each came from (`built-in`, or `plugin <package>
<version>`, `stores.plugins`); an installed entry that cannot be used is one `problem:` line
after the table naming its package, and the others are still listed.
"""

from __future__ import annotations


from harness.cli.common import Table, out


def register(sub) -> None:
    p = sub.add_parser("ls", help="list strategies, decision policies, scenarios, criteria or runs")
    p.add_argument("what", choices=["strategies", "policies", "scenarios", "runs", "criteria"])
    p.add_argument("paths", nargs="*", help="for scenarios: files or folders (default: datasets/canonical)")
    p.set_defaults(func=main)


def main(args) -> int:
    if args.what == "strategies":
        from dataclasses import fields

        from stores.params import SECRET
        from stores.registry import CONTROLS, STRATEGIES, SpecError, strategy_class

        t = Table("strategy", "capabilities", "parameters (defaults)", "from")
        problems, installed = STRATEGIES.problems(), []
        for name, entry in STRATEGIES.entries().items():
            try:
                cls = strategy_class(name)
                defaults = cls.Params()
            except (SpecError, TypeError, ValueError) as e:  # a broken plugin never hides the others
                problems.append(str(e))
                continue
            params = ", ".join(
                f"{f.name}={SECRET} (from ${f.metadata['env']})" if f.metadata.get("secret") else f"{f.name}={getattr(defaults, f.name)!r}"
                for f in fields(cls.Params))
            t.add_row(name, ",".join(sorted(cls.capabilities)) or "-", params or "-",
                      "control" if name in CONTROLS else entry.origin)
            if entry.origin != "built-in":
                installed.append(f"{name}: {entry.where()} ({entry.target})")
        from stores.expiry import ExpiryParams

        # the stage is not a strategy of its own: any one takes it, `name:expiry=on,expiry.<rule>=v`
        rules = ", ".join(f"expiry.{f.name}={getattr(ExpiryParams(), f.name)!r}" for f in fields(ExpiryParams))
        t.add_row("(any):expiry=on", "+expiry", rules, "stage")
        out.print(t)
        _problems(installed, "")  # the table stays narrow: the package and version of each plugin below it
        _problems(problems)
    elif args.what == "policies":
        from stores.decisions.registry import DEFAULT_POLICIES, POLICY_REGISTRY, PolicySpecError, describe

        t = Table("policy", "parameter", "default", "what it sets", "from")
        problems, installed = POLICY_REGISTRY.problems(), []
        for name, entry in POLICY_REGISTRY.entries().items():
            try:
                rows = describe(name)
            except (PolicySpecError, TypeError, ValueError) as e:
                problems.append(str(e))
                continue
            for i, (key, default, doc) in enumerate(rows):
                t.add_row(name if i == 0 else "", key, repr(default), doc, entry.origin if i == 0 else "")
            if entry.origin != "built-in":
                installed.append(f"{name}: {entry.where()} ({entry.target})")
        out.print(t)
        _problems(installed, "")
        _problems(problems)
        out.print(f"default: --policies {','.join(DEFAULT_POLICIES)}; a variant: --policies 'session_state:hostile_streak=3'")
    elif args.what == "scenarios":
        from harness.cli.common import load_or_exit

        t = Table("scenario", "suite", "subjects", "turns", "probes", "tags", "title")
        for s in load_or_exit(args.paths):
            t.add_row(s.id, s.suite, str(len(s.subjects)), str(len(s.turns)), str(len(s.probes)), ",".join(s.tags), s.title)
        out.print(t)
    elif args.what == "criteria":
        from harness.criteria import problems, registry, source

        installed = []
        t = Table("criterion", "group", "level", "metric", "needs", "what it checks", "from")
        for c in registry().values():
            metric = c.metric.headline + "".join(f", {col.key}" for col in c.metric.columns)
            entry = source(c.key)
            t.add_row(c.key, c.group, c.level, metric, c.requires or "-", c.description.splitlines()[0] if c.description else c.title,
                      entry.origin if entry is not None else "code")
            if entry is not None and entry.origin != "built-in":
                installed.append(f"{c.key}: {entry.where()} ({entry.target})")
        out.print(t)
        _problems(installed, "")
        _problems(problems())
    else:
        from harness.analysis.results import list_runs, runs_root

        runs = list_runs(include_damaged=True)
        if not runs:
            out.print(f"no runs under {runs_root()}")
            return 0
        t = Table("run", "name", "suite", "started", "strategies", "scenarios", "probes", "state")
        for r in runs:
            if r.problem:  # listed, so nobody wonders where it went; `latest` skips it
                t.add_row(r.run_id, "", "", "", "", "", "", f"damaged: {r.problem}")
                continue
            c = r.manifest.get("counts", {})
            suites = ", ".join(sorted({str(d.get("suite", "")) for d in r.manifest.get("datasets", [])}))
            t.add_row(r.run_id, r.manifest.get("name") or "", suites, r.started[:19], ", ".join(r.strategies),
                      str(c.get("scenarios", "")), str(c.get("probes", "")), "ok")
        out.print(t)
    return 0


def _problems(lines: list[str], prefix: str = "problem: ") -> None:
    """Lines after a table, unwrapped: where each plugin came from, or one per installed entry
    that cannot be used."""
    for line in lines:
        out.print(f"{prefix}{line}", markup=False, soft_wrap=True)
