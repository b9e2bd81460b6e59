"""Unit tests of agents/python/olivares_agent.py: the test plays the
runner's part on descriptors 3 and 4 of an agent process and checks every
line the agent writes.

Run: python3 -m unittest discover -s tests/python (from the source tree),
or with OLIVARES_SRCDIR naming it.
"""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("OLIVARES_SRCDIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE_DIR = os.path.join(SRC, "agents", "python")
SDK_AGENT = os.path.join(SRC, "tests", "fixtures", "agents", "sdk_agent.py")
EXAMPLE = os.path.join(MODULE_DIR, "example.py")


class Runner:
    """An agent process with the protocol on its descriptors 3 and 4."""

    def __init__(self, argv, env=None):
        to_agent_r, self._to_agent = os.pipe()
        self._from_agent, from_agent_w = os.pipe()
        self.log = tempfile.TemporaryFile()

        def descriptors():
            # lifted above 4 first, so that neither dup2 overwrites the other
            a = fcntl.fcntl(to_agent_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_agent_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        # no byte code written into the source tree
        full_env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": MODULE_DIR,
                    "PYTHONDONTWRITEBYTECODE": "1"}
        full_env.update(env or {})
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=full_env, cwd="/",
                                     preexec_fn=descriptors, pass_fds=(3, 4))
        os.close(to_agent_r)
        os.close(from_agent_w)
        self._out = os.fdopen(self._to_agent, "wb")
        self._in = os.fdopen(self._from_agent, "rb")

    def send(self, msg):
        self._out.write(json.dumps(msg).encode() + b"\n")
        self._out.flush()

    def read(self):
        line = self._in.readline()
        return json.loads(line) if line else None

    def close(self, timeout=20):
        self._out.close()
        rest = self._in.read()
        status = self.proc.wait(timeout=timeout)
        self._in.close()
        self.log.seek(0)
        log = self.log.read().decode("utf-8", "replace")
        self.log.close()
        return status, rest, log


def serve_step(r, seq, text, resources, tools):
    """Send step seq, answer the agent's requests from the two dicts, and
    return (the requests seen, the line that ended the step)."""
    r.send({"type": "step", "seq": seq, "key": "step-%d" % seq, "input": text})
    seen = []
    while True:
        line = r.read()
        if line is None:
            return seen, None
        if line["type"] == "resource":
            seen.append(("resource", line["resource"], line.get("seq")))
            name = line["resource"]
            if name in resources:
                r.send({"type": "resource", "resource": name, "found": True,
                        "response": resources[name]})
            else:
                r.send({"type": "resource", "resource": name, "found": False,
                        "response": "[[mock-miss:%s]]" % name})
        elif line["type"] == "tool":
            seen.append(("tool", line["tool"], line["args"], line.get("seq")))
            answer = tools.get((line["tool"], json.dumps(line["args"], sort_keys=True)))
            if answer is None:
                r.send({"type": "tool", "tool": line["tool"], "found": False,
                        "error": "[[mock-miss:tool %s]]" % line["tool"]})
            else:
                r.send(dict({"type": "tool", "tool": line["tool"], "found": True}, **answer))
        else:
            return seen, line


class TestSdk(unittest.TestCase):
    def test_steps_resources_tools_and_the_log(self):
        r = Runner([sys.executable, SDK_AGENT])
        resources = {"profile:ada": "Ada", "profile:bob": "Bob"}
        tools = {("search", json.dumps({"q": "ada"})): {"response": [1, 2, 3]}}
        seen, end = serve_step(r, 1, "ada", resources, tools)
        self.assertEqual(seen, [("resource", "profile:ada", 1),
                                ("tool", "search", {"q": "ada"}, 1)])
        self.assertEqual(end, {"type": "output", "output": "Ada/3/4 threads", "seq": 1})
        # a tool call no mock answers: the marker, as for a resource
        seen, end = serve_step(r, 2, "bob", resources, tools)
        self.assertEqual(end["output"], "Bob/[[mock-miss:tool search]]/4 threads")
        status, rest, log = r.close()
        self.assertEqual(status, 0)
        self.assertEqual(rest, b"")
        self.assertIn("stdout: step 1 input ada", log)
        self.assertIn("stderr: step 2", log)

    def test_an_exception_fails_its_step_with_its_type_and_message(self):
        r = Runner([sys.executable, SDK_AGENT])
        seen, end = serve_step(r, 1, "ada", {"profile:ada": "Ada"}, {})
        self.assertEqual(end["type"], "output")
        seen, end = serve_step(r, 2, "raise", {}, {})
        self.assertEqual(seen, [])
        self.assertEqual(end, {"type": "error", "error": "ValueError: step 2 cannot be answered",
                               "seq": 2})
        status, rest, log = r.close()
        self.assertEqual(status, 1)
        # the whole traceback is in the log, ending with the exception
        self.assertIn("Traceback (most recent call last):\n", log)
        self.assertIn('in step\n    raise ValueError("step %d cannot be answered" % s.seq)\n'
                      "ValueError: step 2 cannot be answered\n", log)

    def test_a_tool_error_is_raised_to_the_agent(self):
        code = ("import olivares_agent\n"
                "def step(s):\n"
                "    try:\n"
                "        s.call('pay', {'amount': 3})\n"
                "    except olivares_agent.ToolError as e:\n"
                "        return {'tool': e.tool, 'error': str(e)}\n"
                "olivares_agent.run(step)\n")
        r = Runner([sys.executable, "-c", code])
        tools = {("pay", json.dumps({"amount": 3})): {"error": "card declined"}}
        seen, end = serve_step(r, 1, "x", {}, tools)
        self.assertEqual(seen, [("tool", "pay", {"amount": 3}, 1)])
        # a JSON value returned is sent as its compact, key-sorted text
        self.assertEqual(end["output"], '{"error":"card declined","tool":"pay"}')
        self.assertEqual(r.close()[0], 0)

    def test_none_returned_is_an_error_not_an_output(self):
        r = Runner([sys.executable, "-c",
                    "import olivares_agent\nolivares_agent.run(lambda s: None)\n"])
        seen, end = serve_step(r, 1, "x", {}, {})
        self.assertEqual(end["type"], "error")
        self.assertEqual(end["error"],
                         "TypeError: the step function returned None: return the step's output")
        self.assertEqual(r.close()[0], 1)

    def test_an_output_over_a_line_fails_its_step(self):
        r = Runner([sys.executable, "-c",
                    "import olivares_agent\nolivares_agent.run(lambda s: 'x' * (1 << 20))\n"])
        seen, end = serve_step(r, 1, "x", {}, {})
        self.assertEqual(end["type"], "error")
        self.assertRegex(end["error"],
                         r"^ProtocolError: a line of 1048613 bytes is over the "
                         r"protocol's 1048576$")
        self.assertEqual(r.close()[0], 1)

    def test_the_descriptors_named_in_the_environment(self):
        # descriptors 3 and 4 are also dup'ed to 7 and 8 by the shell
        r = Runner(["/bin/sh", "-c", "exec 7<&3 8>&4 3<&- 4>&-; exec %s %s" % (
            sys.executable, EXAMPLE)],
            env={"OLIVARES_PROTOCOL_IN_FD": "7", "OLIVARES_PROTOCOL_OUT_FD": "8"})
        tools = {("search", json.dumps({"q": "ada"})): {"response": ["a", "b"]}}
        seen, end = serve_step(r, 1, "ada", {"profile:ada": "Ada"}, tools)
        self.assertEqual(end, {"type": "output", "output": "hello Ada (2 hits)", "seq": 1})
        status, _, log = r.close()
        self.assertEqual(status, 0)
        self.assertIn("step 1 for ada", log)


if __name__ == "__main__":
    unittest.main()
