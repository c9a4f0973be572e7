"""`supportbench ls strategies|policies|scenarios|criteria|runs`."""

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
        from stores.registry import CONTROLS, REGISTRY, strategy_class

        t = Table("strategy", "capabilities", "parameters (defaults)", "")
        for name in REGISTRY:
            cls = strategy_class(name)
            defaults = cls.Params()
            params = ", ".join(
                f"{f.name}={SECRET} (from ${f.metadata['env']})" if f.metadata.get("secret") else f"{f.name}={getattr(defaults, f.name)!r}"
                for f in fields(cls.Params))
            t.add_row(name, ",".join(sorted(cls.capabilities)) or "-", params or "-", "control" if name in CONTROLS else "")
        from stores.expiry import ExpiryParams

        # the stage is not a strategy of its own: any one takes it, `name:expiry=on,expiry.<rule>=v`
        rules = ", ".join(f"expiry.{f.name}={getattr(ExpiryParams(), f.name)!r}" for f in fields(ExpiryParams))
        t.add_row("(any):expiry=on", "+expiry", rules, "stage")
        out.print(t)
    elif args.what == "policies":
        from stores.decisions.registry import DEFAULT_POLICIES, POLICIES, describe

        t = Table("policy", "parameter", "default", "what it sets")
        for name in POLICIES:
            for i, (key, default, doc) in enumerate(describe(name)):
                t.add_row(name if i == 0 else "", key, repr(default), doc)
        out.print(t)
        out.print(f"default: --policies {','.join(DEFAULT_POLICIES)}; a variant: --policies 'session_state:hostile_streak=3'")
    elif args.what == "scenarios":
        from harness.cli.common import load_or_exit

        t = Table("scenario", "suite", "subjects", "turns", "probes", "tags", "title")
        for s in load_or_exit(args.paths):
            t.add_row(s.id, s.suite, str(len(s.subjects)), str(len(s.turns)), str(len(s.probes)), ",".join(s.tags), s.title)
        out.print(t)
    elif args.what == "criteria":
        from harness.criteria import registry

        t = Table("criterion", "group", "level", "metric", "needs", "what it checks")
        for c in registry().values():
            metric = c.metric.headline + "".join(f", {col.key}" for col in c.metric.columns)
            t.add_row(c.key, c.group, c.level, metric, c.requires or "-", c.description.splitlines()[0] if c.description else c.title)
        out.print(t)
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
