"""A scenario with a probe waiting for gold, for the labelling tests (harness and app)."""

SCENARIO = """# a hand-written comment that must survive
id: lbl
version: 1
title: a returning customer, one probe waiting for gold
start: 2026-01-01T00:00:00Z
subjects: {c: {name: Dana}}
events:
  - turn: "My invoice shows a double charge"   # the complaint
    subject: c
    session: s1
    id: t1
  - turn: I refunded the duplicate charge.
    role: agent
    id: t2
  - resolve: s1
    status: resolved
    summary: refunded
  # she comes back
  - probe: back
    session: s2
    at: +3d
    task: the double charge is back
    unlabelled: true
  - turn: the double charge is back
"""
