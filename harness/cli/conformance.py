"""`supportbench conformance URL`: check a memory service against the protocol the `http` strategy speaks.

Exit codes like `check`'s: 0 every check passed, 1 some failed (each named, with what was
expected and what came back), 2 the service could not be checked at all.
"""

from __future__ import annotations

import os

from harness.cli.common import console, out


def register(sub) -> None:
    p = sub.add_parser("conformance", help="check a memory service against the http strategy's protocol "
                                           "(exit 0 pass, 1 some checks failed, 2 unusable)")
    p.add_argument("url", help="the service's base URL, e.g. http://127.0.0.1:8700")
    p.add_argument("--key-env", default="SUPPORTBENCH_HTTP_KEY",
                   help="environment variable holding the service's bearer key (default: SUPPORTBENCH_HTTP_KEY; "
                        "a key is never given on the command line)")
    p.add_argument("--timeout", type=float, default=10.0, help="whole-call deadline per request in seconds (default 10)")
    p.set_defaults(func=main)


def main(args) -> int:
    import httpx

    from harness.ci.conformance import Conformance, Unusable

    if not args.url.startswith(("http://", "https://")) or not 0 < args.timeout <= 600:
        console.print(f"error: expected an http(s) URL and a timeout in (0, 600] s; got {args.url!r}, {args.timeout}", markup=False)
        console.print("UNUSABLE (exit 2)", markup=False)
        return 2
    try:
        checker = Conformance(args.url, api_key=os.environ.get(args.key_env, ""), timeout_s=args.timeout)
    except (ValueError, httpx.InvalidURL) as e:
        console.print(f"error: {args.url!r}: {e}", markup=False)
        console.print("UNUSABLE (exit 2)", markup=False)
        return 2
    try:
        results = checker.run()
    except Unusable as e:
        console.print(f"error: {e}", markup=False)
        console.print("UNUSABLE (exit 2)", markup=False)
        return 2
    for r in results:
        out.print(f"{'PASS' if r.passed else 'FAIL'}  {r.name}: {r.detail}", markup=False, soft_wrap=True)
    failed = [r.name for r in results if not r.passed]
    if failed:
        out.print(f"FAIL (exit 1): {len(failed)} of {len(results)} checks failed: {', '.join(failed)}", markup=False)
        return 1
    out.print(f"PASS (exit 0): all {len(results)} checks passed", markup=False)
    return 0
