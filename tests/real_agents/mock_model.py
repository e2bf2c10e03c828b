#!/usr/bin/env python3
"""A scripted model server on 127.0.0.1 for wfx's contract suite.

It speaks the four wire formats the real agent CLIs use:

- Anthropic Messages (`POST /v1/messages`, streaming and not): Claude Code
- OpenAI chat completions (`POST /v1/chat/completions`): Qwen Code, OpenCode
- OpenAI Responses (`POST /v1/responses`, streaming): Codex
- Gemini (`POST /v1beta/models/M:generateContent` and
  `:streamGenerateContent?alt=sse`): Gemini CLI

What it answers is decided by two things only:

- the *mode*, taken from the API key the CLI sends (`mock-<mode>`):
  `ok`, `429`, `500`, `hang`, `nostrategy`, `edit`;
- the *kind* of conversation, read from its last user message (wfx's
  prompt): `review` (phase 3), `analysis` (phase 5), `fix`, or `aux` (a
  CLI's own side request: titles, routing, memory, next-speaker checks).

Scripted answers:

- review: a Markdown review of the plan (more than 100 words, DESIGN §6.3);
- analysis: prose plus a fenced ```json fix strategy (SCRIPT["strategy"]);
- fix: the CLI's own tools, picked from the tool list it sent: read the
  file (when it offers a read tool), then edit it (an old/new replacement
  tool, a whole-file write tool, or `apply_patch`), then a short summary;
- aux: JSON filled from the requested schema, else a short text.

Failure modes (every request made with that key):

- `429` and `500`: the API's error body with that status;
- `hang`: headers never come; the connection stays open until the client
  gives up or the server stops;
- `nostrategy`: analyses and reviews answer prose without any JSON;
- `edit`: an analysis first calls the CLI's edit tool on the source file,
  then its shell tool (`touch MOCK-SHELL-RAN`), then answers the strategy;
- `break`: a fix makes the scripted fix, then the hostile edit too (it
  fixes the failing test and breaks a passing one).

Edits name files under the directory the CLI says it works in (its
environment block: a fix candidate works in a checkout of its own), else
under --project.

Usage: mock_model.py --project DIR --script FILE --port-file FILE --log FILE
Every request is appended to the log as one JSON line (kind, mode, api,
step, tool names, prompt head) for the tests to assert on. Stdlib only.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ARGS = None
SCRIPT = {}
LOG_LOCK = threading.Lock()
STOPPING = threading.Event()

# Markers that start wfx's prompts (templates/prompts/*.j2 and
# templates/test-analysis-prompt.md.j2).
KINDS = [
    ("# Test failure analysis", "analysis"),
    ("# Fix task", "fix"),
    ("You are reviewing a test plan", "review"),
    ("# Test generation task", "test_gen"),
]

SHELL_MARK = "MOCK-SHELL-RAN"


# ---------------------------------------------------------------- requests


def kind_of(text):
    for marker, kind in KINDS:
        if marker in text:
            return kind
    return "aux"


def is_reminder(text):
    """Context a CLI adds to the user's message (Claude Code, Qwen Code)."""
    return text.lstrip().startswith("<system-reminder>")


def block_text(content):
    """Text of a message's content (string or list of blocks/parts),
    without the CLI's own <system-reminder> parts."""
    if isinstance(content, str):
        return content
    out = []
    for c in content or []:
        if isinstance(c, dict):
            for key in ("text", "input_text"):
                if isinstance(c.get(key), str) and not is_reminder(c[key]):
                    out.append(c[key])
    return "\n".join(out)


class Conversation:
    """What the server needs to know about one request, whatever its API."""

    def __init__(self, last_user, tools, tool_results, schema=None):
        self.last_user = last_user  # text of the last real user message
        self.tools = tools  # {name: json schema of the arguments}
        self.tool_results = tool_results  # tool results so far, in order
        self.schema = schema  # a JSON schema the answer must follow
        # Side requests (titles, summaries, routing) may carry the prompt
        # too but offer no tools; they are answered as `aux`.
        self.kind = kind_of(last_user) if tools else "aux"
        self.root = ARGS.project  # where the CLI works (see cwd_of)


def anthropic_conversation(body):
    last_user, results = "", []
    for m in body.get("messages", []):
        content = m.get("content")
        if m.get("role") != "user":
            continue
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        tr = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        results.extend(tr)
        texts = [
            b.get("text", "")
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and not is_reminder(b.get("text", ""))
        ]
        if not tr and any(t.strip() for t in texts):
            last_user = "\n".join(texts)
    tools = {t["name"]: t.get("input_schema", {}) for t in body.get("tools", []) if "name" in t}
    return Conversation(last_user, tools, results)


def chat_conversation(body):
    last_user, results = "", []
    for m in body.get("messages", []):
        if m.get("role") == "tool":
            results.append(m)
        elif m.get("role") == "user":
            last_user = block_text(m.get("content"))
    tools = {}
    for t in body.get("tools", []) or []:
        f = t.get("function", {})
        if "name" in f:
            tools[f["name"]] = f.get("parameters") or {}
    schema = None
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        schema = (rf.get("json_schema") or {}).get("schema") or {}
    return Conversation(last_user, tools, results, schema)


def responses_conversation(body):
    last_user, results = "", []
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for it in items:
        t = it.get("type", "message")
        if t in ("function_call_output", "custom_tool_call_output"):
            results.append(it)
        elif t == "message" and it.get("role") == "user":
            text = block_text(it.get("content"))
            # Codex sends its environment context as a user message first.
            if not text.lstrip().startswith("<"):
                last_user = text
    tools = {}
    for t in body.get("tools", []) or []:
        if t.get("name"):
            tools[t["name"]] = t.get("parameters") or {"__custom__": t.get("format", {})}
    return Conversation(last_user, tools, results)


def gemini_conversation(body):
    last_user, results = "", []
    for c in body.get("contents", []):
        if c.get("role") != "user":
            continue
        parts = c.get("parts", [])
        fr = [p for p in parts if "functionResponse" in p]
        results.extend(fr)
        # Gemini CLI sends its <session_context> as a text part of its own.
        text = "\n".join(
            p["text"] for p in parts if "text" in p and not p["text"].lstrip().startswith("<session_context>")
        )
        if not fr and text.strip():
            last_user = text
    tools = {}
    for t in body.get("tools", []) or []:
        for f in t.get("functionDeclarations", []) or []:
            tools[f["name"]] = f.get("parametersJsonSchema") or f.get("parameters") or {}
    gc = body.get("generationConfig") or {}
    schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
    if schema is None and gc.get("responseMimeType") == "application/json":
        schema = {}
    return Conversation(last_user, tools, results, schema)


# How each CLI names its working directory in the context it sends:
# Claude Code (`Primary working directory: …`), OpenCode (`Working
# directory: …`), Codex (`<cwd>…</cwd>`), Gemini CLI and Qwen Code
# (`working in the directory: …`).
CWD_PATTERNS = [
    re.compile(r"[Ww]orking directory: (/[^\n<]+)"),
    re.compile(r"<cwd>(/[^<]+)</cwd>"),
    re.compile(r"working in the directory:? (/[^\n<]+)"),
]


def strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def cwd_of(body):
    """The directory the CLI says it works in, if it names an existing one."""
    for text in strings(body):
        for pattern in CWD_PATTERNS:
            m = pattern.search(text)
            if m and os.path.isdir(m.group(1).strip()):
                return m.group(1).strip()
    return None


# ------------------------------------------------------------------- plans


def props(schema):
    return (schema or {}).get("properties", {}) or {}


def first_prop(schema, names):
    p = props(schema)
    for n in names:
        if n in p:
            return n
    return None


PATH_NAMES = ["file_path", "filePath", "absolute_path", "path"]
OLD_NAMES = ["old_string", "oldString", "old_str"]
NEW_NAMES = ["new_string", "newString", "new_str"]


def find_tool(tools, test):
    for name, schema in tools.items():
        if test(name, schema):
            return name
    return None


def read_tool(tools):
    return find_tool(
        tools,
        lambda n, s: n.lower() in ("read", "read_file", "view") and first_prop(s, PATH_NAMES),
    )


def replace_tool(tools):
    return find_tool(tools, lambda n, s: first_prop(s, OLD_NAMES) and first_prop(s, NEW_NAMES) and first_prop(s, PATH_NAMES))


def write_tool(tools):
    return find_tool(tools, lambda n, s: "content" in props(s) and first_prop(s, PATH_NAMES))


def shell_tool(tools):
    return find_tool(
        tools,
        lambda n, s: n in ("Bash", "bash", "run_shell_command", "shell", "exec_command", "local_shell"),
    )


def fill_required(schema, args):
    """Give every required argument the tool insists on a plain value."""
    for name in (schema or {}).get("required", []) or []:
        if name in args:
            continue
        spec = props(schema).get(name, {})
        t = str(spec.get("type", "string")).lower()
        if "enum" in spec:
            args[name] = spec["enum"][0]
        elif t == "boolean":
            args[name] = False
        elif t in ("integer", "number"):
            args[name] = 1
        elif t == "array":
            args[name] = []
        elif t == "object":
            args[name] = {}
        else:
            args[name] = "Apply the scripted change"
    return args


def edit_call(root, tools, rel, old, new):
    """(tool, arguments) that replace `old` by `new` in `rel`, or None."""
    if "apply_patch" in tools:
        old_lines = "".join("-" + l + "\n" for l in old.split("\n"))
        new_lines = "".join("+" + l + "\n" for l in new.split("\n"))
        patch = f"*** Begin Patch\n*** Update File: {rel}\n@@\n{old_lines}{new_lines}*** End Patch\n"
        return ("apply_patch", patch)
    name = replace_tool(tools)
    if name:
        s = tools[name]
        args = {
            first_prop(s, PATH_NAMES): os.path.join(root, rel),
            first_prop(s, OLD_NAMES): old,
            first_prop(s, NEW_NAMES): new,
        }
        return (name, fill_required(s, args))
    name = write_tool(tools)
    if name:
        s = tools[name]
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8") as f:
            content = f.read().replace(old, new, 1)
        return (name, fill_required(s, {first_prop(s, PATH_NAMES): path, "content": content}))
    return None


def shell_call(tools, command):
    name = shell_tool(tools)
    if not name:
        # Not offered in this role: a hostile model calls it anyway.
        return ("Bash" if "Read" in tools else "run_shell_command", {"command": command})
    s = tools[name]
    key = first_prop(s, ["command", "cmd"]) or "command"
    t = props(s).get(key, {}).get("type")
    value = ["bash", "-lc", command] if t == "array" else command
    return (name, fill_required(s, {key: value}))


def plan_for(conv, mode):
    """The steps of a scripted conversation: tool calls, then a final text."""
    fix = SCRIPT["fix"]
    hostile = SCRIPT["hostile_edit"]
    root = conv.root
    steps = []
    if conv.kind == "fix":
        rt = read_tool(conv.tools)
        if rt:
            steps.append((rt, fill_required(conv.tools[rt], {first_prop(conv.tools[rt], PATH_NAMES): os.path.join(root, fix["file"])})))
        edits = [fix] + ([hostile] if mode == "break" else [])
        for e in edits:
            call = edit_call(root, conv.tools, e["file"], e["old"], e["new"])
            if call:
                steps.append(call)
        steps.append(SCRIPT["fix_summary"])
    elif conv.kind in ("analysis", "review"):
        if mode == "edit" and conv.kind == "analysis":
            call = edit_call(root, conv.tools, hostile["file"], hostile["old"], hostile["new"])
            if call is None:
                call = ("Edit" if "Read" in conv.tools else "edit", {"file_path": os.path.join(root, hostile["file"]), "old_string": hostile["old"], "new_string": hostile["new"]})
            steps.append(call)
            steps.append(shell_call(conv.tools, f"touch {SHELL_MARK}"))
        if mode == "nostrategy":
            steps.append(SCRIPT["no_strategy_answer"])
        elif conv.kind == "review":
            steps.append(SCRIPT["review"])
        else:
            steps.append(analysis_text())
    elif conv.kind == "test_gen":
        steps.append("No tests to add.")
    return steps


def analysis_text():
    return SCRIPT["analysis_prose"] + "\n\n```json\n" + json.dumps(SCRIPT["strategy"], indent=2) + "\n```\n"


def from_schema(schema):
    """A value that satisfies a (simple) JSON schema."""
    schema = schema or {}
    t = str(schema.get("type", "object")).lower()
    if "enum" in schema:
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if t == "object":
        return {k: from_schema(v) for k, v in props(schema).items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 10
    if t == "boolean":
        return False
    return "ok"


def next_step(conv, mode):
    """A final text (str) or a tool call (name, args), and the step index."""
    if conv.kind == "aux":
        if conv.schema is not None:
            return json.dumps(from_schema(conv.schema)), 0
        return "Fix the failing test", 0
    steps = plan_for(conv, mode)
    i = min(len(conv.tool_results), len(steps) - 1)
    return steps[i], i


# ----------------------------------------------------------------- server


def log(entry):
    with LOG_LOCK, open(ARGS.log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


ERRORS = {
    "anthropic": {
        429: {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit exceeded: too many requests"}},
        500: {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
    },
    "openai": {
        429: {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}},
        500: {"error": {"message": "We're currently experiencing high demand, which may cause temporary errors.", "type": "server_error", "code": None}},
    },
    "gemini": {
        429: {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}},
        500: {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}},
    },
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    # -- plumbing

    def read_body(self):
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def send_json(self, obj, status=200, extra=()):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def sse_start(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, obj, event=None):
        s = (f"event: {event}\n" if event else "") + "data: " + json.dumps(obj) + "\n\n"
        self.wfile.write(s.encode())
        self.wfile.flush()

    def key(self):
        for h in ("x-api-key", "x-goog-api-key"):
            if self.headers.get(h):
                return self.headers[h]
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        q = parse_qs(urlparse(self.path).query)
        return (q.get("key") or [""])[0]

    def mode(self):
        k = self.key()
        return k[len("mock-"):] if k.startswith("mock-") else "ok"

    def hang(self):
        while not STOPPING.is_set():
            time.sleep(0.2)

    # -- dispatch

    def do_GET(self):
        path = urlparse(self.path).path
        if path.endswith("/models"):
            return self.send_json({"object": "list", "data": [{"id": SCRIPT.get("model", "mock"), "object": "model"}]})
        self.send_json({"error": {"message": f"not found: {path}"}}, 404)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        raw = self.read_body()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        path = urlparse(self.path).path
        if ARGS.dump:
            with LOG_LOCK, open(ARGS.dump, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "headers": dict(self.headers), "body": body}) + "\n")
        if path.endswith("/messages/count_tokens"):
            return self.send_json({"input_tokens": 100})
        if path.endswith(":countTokens"):
            return self.send_json({"totalTokens": 100})
        if path.endswith("/messages"):
            api, conv = "anthropic", anthropic_conversation(body)
        elif path.endswith("/chat/completions"):
            api, conv = "openai", chat_conversation(body)
        elif path.endswith("/responses"):
            api, conv = "openai", responses_conversation(body)
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            api, conv = "gemini", gemini_conversation(body)
        else:
            log({"path": path, "status": 404})
            return self.send_json({"error": {"message": f"not found: {path}"}}, 404)
        mode = self.mode()
        conv.root = cwd_of(body) or ARGS.project
        entry = {
            "path": path,
            "mode": mode,
            "kind": conv.kind,
            "cwd": conv.root,
            "tools": sorted(conv.tools),
            "tool_results": len(conv.tool_results),
            "prompt_head": conv.last_user.strip()[:120],
        }
        if mode in ("429", "500"):
            status = int(mode)
            log({**entry, "status": status})
            retry = [("retry-after", "1")] if status == 429 else []
            return self.send_json(ERRORS[api][status], status, retry)
        if mode == "hang":
            log({**entry, "status": "hang"})
            return self.hang()
        step, index = next_step(conv, mode)
        entry.update(step=index, answer=(step if isinstance(step, str) else {"tool": step[0]}) if conv.kind != "aux" else "aux")
        if isinstance(entry["answer"], str):
            entry["answer"] = entry["answer"][:60]
        log({**entry, "status": 200})
        model = body.get("model") or SCRIPT.get("model", "mock")
        if path.endswith("/messages"):
            self.anthropic_messages(body, step, model)
        elif path.endswith("/chat/completions"):
            self.chat_completions(body, step, model)
        elif path.endswith("/responses"):
            self.openai_responses(step, model)
        else:
            self.gemini_content(step, ":streamGenerateContent" in path)

    # -- wire formats

    def anthropic_messages(self, body, step, model):
        if isinstance(step, str):
            block = {"type": "text", "text": step}
            stop = "end_turn"
        else:
            block = {"type": "tool_use", "id": f"toolu_{int(time.time()*1000)}", "name": step[0], "input": step[1]}
            stop = "tool_use"
        usage = {"input_tokens": 1200, "output_tokens": 80, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        msg = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "stop_reason": None, "stop_sequence": None}
        if not body.get("stream"):
            return self.send_json({**msg, "content": [block], "stop_reason": stop, "usage": usage})
        self.sse_start()
        self.sse({"type": "message_start", "message": {**msg, "content": [], "usage": {**usage, "output_tokens": 1}}}, "message_start")
        if block["type"] == "text":
            self.sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}, "content_block_start")
            self.sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": step}}, "content_block_delta")
        else:
            self.sse({"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}}, "content_block_start")
            self.sse({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps(step[1])}}, "content_block_delta")
        self.sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        self.sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 80}}, "message_delta")
        self.sse({"type": "message_stop"}, "message_stop")

    def chat_completions(self, body, step, model):
        usage = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280}
        if isinstance(step, str):
            message = {"role": "assistant", "content": step}
            finish = "stop"
        else:
            call = {"id": f"call_{int(time.time()*1000)}", "type": "function", "function": {"name": step[0], "arguments": json.dumps(step[1])}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        base = {"id": "chatcmpl-mock", "created": int(time.time()), "model": model}
        if not body.get("stream"):
            return self.send_json({**base, "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
        self.sse_start()
        chunk = {**base, "object": "chat.completion.chunk"}
        if isinstance(step, str):
            delta = {"role": "assistant", "content": step}
        else:
            delta = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **message["tool_calls"][0]}]}
        self.sse({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        self.sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        self.sse({**chunk, "choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def openai_responses(self, step, model):
        rid = f"resp_{int(time.time()*1000)}"
        if isinstance(step, str):
            item = {"type": "message", "id": "msg_mock", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": step, "annotations": []}]}
        elif isinstance(step[1], str):
            item = {"type": "custom_tool_call", "id": "ctc_mock", "status": "completed", "call_id": f"call_{rid}", "name": step[0], "input": step[1]}
        else:
            item = {"type": "function_call", "id": "fc_mock", "status": "completed", "call_id": f"call_{rid}", "name": step[0], "arguments": json.dumps(step[1])}
        resp = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "in_progress", "model": model, "output": []}
        self.sse_start()
        self.sse({"type": "response.created", "response": resp}, "response.created")
        self.sse({"type": "response.output_item.added", "output_index": 0, "item": item}, "response.output_item.added")
        if item["type"] == "message":
            self.sse({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": step}, "response.output_text.delta")
        self.sse({"type": "response.output_item.done", "output_index": 0, "item": item}, "response.output_item.done")
        usage = {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 80, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1280}
        self.sse({"type": "response.completed", "response": {**resp, "status": "completed", "output": [item], "usage": usage}}, "response.completed")

    def gemini_content(self, step, stream):
        if isinstance(step, str):
            part = {"text": step}
        else:
            part = {"functionCall": {"name": step[0], "args": step[1]}}
        obj = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1200, "candidatesTokenCount": 80, "totalTokenCount": 1280},
            "modelVersion": SCRIPT.get("model", "mock"),
        }
        if not stream:
            return self.send_json(obj)
        self.sse_start()
        self.sse(obj)


def main():
    global ARGS, SCRIPT
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--project", required=True, help="the project the CLIs work in (absolute paths of edits)")
    p.add_argument("--script", required=True, help="JSON: fix, strategy, review, … (see script.json)")
    p.add_argument("--port-file", required=True, help="where to write the port once listening")
    p.add_argument("--log", required=True, help="JSON Lines log of every request")
    p.add_argument("--dump", help="also append every request body here (JSON Lines), to debug")
    ARGS = p.parse_args()
    with open(ARGS.script, encoding="utf-8") as f:
        SCRIPT = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, ARGS.port_file)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        STOPPING.set()


if __name__ == "__main__":
    sys.exit(main())
