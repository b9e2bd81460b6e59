"""olivares_agent: the agent side of the olivares sandbox's agent protocol.

An agent program written in Python imports this module, defines one
function that answers a step, and hands it to run():

    import olivares_agent

    def step(s):                                   # s.seq, s.key, s.input
        who = s.resource("profile:" + s.input)     # the mock's response, or the miss marker
        hits = s.call("search", {"q": s.input})    # a tool mock's response (any JSON value)
        return "hello " + who                      # the step's output

    olivares_agent.run(step)

The runner speaks to the agent on two descriptors of its own, one JSON
object a line (OLIVARES_PROTOCOL_IN_FD, the runner's lines, and
OLIVARES_PROTOCOL_OUT_FD, the agent's; 3 and 4 when the environment does
not name them). stdout and stderr are the run's log: print() as you like.

The standard library only, so that it runs under whatever python3 the jail
binds. The sandbox makes this module importable inside the jail on every
OS-level backend; nothing has to be installed.
"""

import json
import os
import sys
import traceback

__all__ = ["Step", "ToolError", "ProtocolError", "run"]

# The runner's own limit of a line (runner/agent.h): a longer line is an
# agent error there, so it is refused here first, with a clearer message.
MAX_LINE_BYTES = 1024 * 1024


class ProtocolError(Exception):
    """The runner sent something this module does not understand."""


class ToolError(Exception):
    """A tool mock answered with an error: the tool failed (not a miss).

    The message is the mock's error text. An agent that does not catch it
    fails its step with "ToolError: <message>", as any exception does.
    """

    def __init__(self, tool, message):
        super().__init__(message)
        self.tool = tool


def _fd(name, default):
    value = os.environ.get(name, "")
    try:
        return int(value) if value else default
    except ValueError:
        return default


class _Channel:
    """The protocol's two pipes, as text streams of lines."""

    def __init__(self, in_fd, out_fd):
        self._in = os.fdopen(in_fd, "rb")
        self._out = os.fdopen(out_fd, "wb")

    def read(self):
        """The next object from the runner, or None at the end of its input."""
        line = self._in.readline(MAX_LINE_BYTES + 2)
        if not line:
            return None
        try:
            msg = json.loads(line)
        except ValueError as e:
            raise ProtocolError("a line from the runner is not JSON: %s" % e) from None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            raise ProtocolError("a line from the runner is not an object with a type")
        return msg

    @staticmethod
    def check(msg):
        """msg as the bytes of its line; ProtocolError when it is too long."""
        data = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if len(data) > MAX_LINE_BYTES:
            raise ProtocolError("a line of %d bytes is over the protocol's %d"
                                % (len(data), MAX_LINE_BYTES))
        return data

    def write(self, msg):
        self._out.write(self.check(msg) + b"\n")
        self._out.flush()


class Step:
    """One step of the run: what the agent is asked, and its two calls.

    seq is the step's number (from 1), key its key in the scenario and
    input its input text.
    """

    def __init__(self, channel, seq, key, input):
        self._channel = channel
        self.seq = seq
        self.key = key
        self.input = input

    def _ask(self, msg, kind):
        msg["seq"] = self.seq
        self._channel.write(msg)
        answer = self._channel.read()
        if answer is None:
            raise ProtocolError("the runner's input ended while a %s was asked for" % kind)
        if answer.get("type") != kind:
            raise ProtocolError("asked for a %s, the runner answered a %r line"
                                % (kind, answer.get("type")))
        return answer

    def resource(self, name):
        """The response of the scenario's mock for resource name (a str).

        A resource no mock answers gives the miss marker
        "[[mock-miss:<name>]]" (the step then counts as a mock miss).
        """
        if not isinstance(name, str):
            raise TypeError("a resource is named by a str, not %s" % type(name).__name__)
        answer = self._ask({"type": "resource", "resource": name}, "resource")
        response = answer.get("response")
        if not isinstance(response, str):
            raise ProtocolError("the runner's resource answer has no response text")
        return response

    def call(self, tool, args=None):
        """Call tool with args (a dict, JSON values): the tool mock's response.

        The response is any JSON value, decoded (dict, list, str, int,
        float, bool or None). A call no mock answers gives the miss marker
        "[[mock-miss:tool <name>]]" (a str; the step counts as a mock
        miss). A mock that answers with an error raises ToolError.
        """
        if not isinstance(tool, str):
            raise TypeError("a tool is named by a str, not %s" % type(tool).__name__)
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise TypeError("a tool's arguments are a dict, not %s" % type(args).__name__)
        answer = self._ask({"type": "tool", "tool": tool, "args": args}, "tool")
        error = answer.get("error")
        if answer.get("found") and isinstance(error, str):
            raise ToolError(tool, error)
        if not answer.get("found"):
            if isinstance(error, str):
                return error
            return answer.get("response", "[[mock-miss:tool %s]]" % tool)
        return answer.get("response")


def _output_text(value):
    """A step's output as the text the run records."""
    if isinstance(value, str):
        return value
    if value is None:
        raise TypeError("the step function returned None: return the step's output")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _reason(exc):
    """One line naming an exception: "Type: message"."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())
    return "%s: %s" % (name, text) if text else name


def run(step, *, in_fd=None, out_fd=None):
    """Answer the runner's steps with step(s) until its input ends.

    step is called once per step with a Step and returns the step's output:
    a str, or any other JSON value (sent as its compact JSON text). An
    exception raised by step ends the run: its traceback goes to stderr
    (the run's log) and the runner is told the step failed, with the
    exception's type and message as the reason (an output too long for
    the protocol's 1 MiB line too). A ProtocolError the runner's lines
    raise in a step fails it the same way. Returns when the runner closes
    its side after the last step; exits with status 1 after a failed step.
    stdout and stderr are made line-buffered: the log keeps the order of
    what they say.
    """
    channel = _Channel(_fd("OLIVARES_PROTOCOL_IN_FD", 3) if in_fd is None else in_fd,
                       _fd("OLIVARES_PROTOCOL_OUT_FD", 4) if out_fd is None else out_fd)
    # stdout and stderr are one pipe, the run's log: written a line at a
    # time, the prints keep their order with stderr's and are not lost in a
    # buffer when the agent is killed (a limit, the end of its grace)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass
    while True:
        msg = channel.read()
        if msg is None:
            return
        if msg.get("type") != "step":
            raise ProtocolError("expected a step line, got %r" % msg.get("type"))
        s = Step(channel, msg.get("seq"), msg.get("key"), msg.get("input"))
        try:
            output = _output_text(step(s))
            line = {"type": "output", "output": output, "seq": s.seq}
            _Channel.check(line)
        except Exception as exc:  # the agent's own failure: the step's error
            reason = _reason(exc)
            sys.stdout.flush()
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            channel.write({"type": "error", "error": reason, "seq": s.seq})
            sys.exit(1)
        channel.write(line)
