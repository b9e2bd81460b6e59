#!/usr/bin/python3
"""An example agent on olivares_agent: greets the step's user by the name
its profile resource gives, and says how many hits a search tool found.

Copy it into the agents directory under a variant's name (mode 0755) and
give the scenario a resource mock "profile:<input>" and a tool mock
{"tool": "search", "args": {"q": <input>}, "response": [...]}.
"""
import olivares_agent


def step(s):
    print("step", s.seq, "for", s.input)          # the run's log, not the protocol
    who = s.resource("profile:" + s.input)
    hits = s.call("search", {"q": s.input})
    count = len(hits) if isinstance(hits, list) else 0
    return "hello %s (%d hits)" % (who, count)


olivares_agent.run(step)
