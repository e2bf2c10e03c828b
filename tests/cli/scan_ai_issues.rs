//! Table tests of the AI-issue scan (REFERENCE.md "AI-issue scan (L0.5)"):
//! for every check a snippet that must trigger it (exact check id, severity
//! and line) and a near-miss that must not. Snippets are scanned as if they
//! lived in the sample projects under `fixtures/scan/`, whose manifests
//! declare the packages the import checks compare against.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use wfx::scan::ai_issues::{load_manifest, scan_file, scan_files};
use wfx::scan::findings::{Finding, Severity, counts};

fn fixture(project: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/scan")
        .join(project)
}

fn scan(project: &str, rel: &str, text: &str) -> Vec<Finding> {
    let root = fixture(project);
    scan_file(&root, rel, text, &load_manifest(&root))
}

use Severity::{Critical, Error, Warning};

/// (category, check, severity) of all 24 checks.
const CHECKS: &[(&str, &str, Severity)] = &[
    ("hallucinated_imports", "undeclared_package", Critical),
    ("hallucinated_imports", "missing_subpath", Critical),
    ("hallucinated_imports", "near_miss_package", Critical),
    ("placeholder_code", "placeholder_comment", Error),
    ("placeholder_code", "not_implemented_body", Error),
    ("placeholder_code", "ellipsis_statement", Error),
    ("mock_leakage", "mock_in_source", Critical),
    ("mock_leakage", "mock_library_in_source", Critical),
    ("mock_leakage", "test_utility_in_source", Error),
    ("type_abuse", "explicit_any", Warning),
    ("type_abuse", "double_cast", Error),
    ("type_abuse", "chained_assertion", Error),
    ("naming", "mixed_naming", Warning),
    ("naming", "misspelled_identifier", Warning),
    ("naming", "non_boolean_predicate", Error),
    ("control_flow", "swallowed_error", Error),
    ("control_flow", "unreachable_code", Warning),
    ("control_flow", "infinite_loop", Warning),
    ("resource_leaks", "listener_not_removed", Warning),
    ("resource_leaks", "unclosed_resource", Error),
    ("resource_leaks", "observable_no_unsubscribe", Warning),
    ("security", "hardcoded_secret", Critical),
    ("security", "sensitive_logging", Warning),
    ("security", "dynamic_code_execution", Critical),
];

/// (project, file, snippet, check, line): the snippet must produce exactly
/// one finding of `check`, at `line`, with the check's severity.
const TRIGGERS: &[(&str, &str, &str, &str, u32)] = &[
    // hallucinated imports
    (
        "py",
        "pkg/new_mod.py",
        "import os\nimport numpy as np\n",
        "undeclared_package",
        2,
    ),
    (
        "node",
        "src/a.js",
        "const _ = require('lodash');\nconst chalk = require('chalk');\n",
        "undeclared_package",
        2,
    ),
    (
        "node",
        "src/a.ts",
        "import express from 'express';\nimport { z } from 'zod';\n",
        "undeclared_package",
        2,
    ),
    (
        "rust",
        "src/extra.rs",
        "use std::io;\nuse serde::Serialize;\nuse rand::Rng;\n",
        "undeclared_package",
        3,
    ),
    (
        "go",
        "internal/store/extra.go",
        "package store\n\nimport (\n\t\"fmt\"\n\t\"github.com/pkg/errors\"\n)\n",
        "undeclared_package",
        5,
    ),
    (
        "node",
        "src/a.js",
        "import { a } from './missing';\n",
        "missing_subpath",
        1,
    ),
    (
        "py",
        "pkg/new_mod.py",
        "from .core import parse\nfrom .nothere import x\n",
        "missing_subpath",
        2,
    ),
    (
        "py",
        "pkg/new_mod.py",
        "import os\nfrom pkg.nothere import x\n",
        "missing_subpath",
        2,
    ),
    (
        "go",
        "internal/store/extra.go",
        "package store\n\nimport \"example.com/scanapp/internal/nothere\"\n",
        "missing_subpath",
        3,
    ),
    (
        "py",
        "pkg/new_mod.py",
        "import reqeusts\n",
        "near_miss_package",
        1,
    ),
    (
        "node",
        "src/a.js",
        "const _ = require('lodahs');\n",
        "near_miss_package",
        1,
    ),
    (
        "rust",
        "src/extra.rs",
        "use serd::Serialize;\n",
        "near_miss_package",
        1,
    ),
    (
        "go",
        "internal/store/extra.go",
        "package store\n\nimport \"github.com/stretchr/testfiy/assert\"\n",
        "near_miss_package",
        3,
    ),
    // placeholder code
    (
        "py",
        "pkg/m.py",
        "def f():\n    # TODO: implement this\n    return 1\n",
        "placeholder_comment",
        2,
    ),
    (
        "node",
        "src/a.js",
        "function f() {\n  // add your code here\n}\n",
        "placeholder_comment",
        2,
    ),
    (
        "py",
        "pkg/m.py",
        "def f():\n    \"\"\"Implementation pending.\"\"\"\n    return 1\n",
        "placeholder_comment",
        2,
    ),
    (
        "py",
        "pkg/m.py",
        "def f(x):\n    raise NotImplementedError\n",
        "not_implemented_body",
        2,
    ),
    (
        "py",
        "pkg/m.py",
        "def handle(event):\n    pass\n",
        "not_implemented_body",
        2,
    ),
    (
        "rust",
        "src/m.rs",
        "pub fn f() -> u32 {\n    todo!()\n}\n",
        "not_implemented_body",
        2,
    ),
    (
        "node",
        "src/a.js",
        "function f() {\n  throw new Error('Not implemented');\n}\n",
        "not_implemented_body",
        2,
    ),
    (
        "go",
        "internal/store/m.go",
        "package store\n\nfunc F() {\n\tpanic(\"not implemented\")\n}\n",
        "not_implemented_body",
        4,
    ),
    (
        "py",
        "pkg/m.py",
        "def f():\n    ...\n",
        "ellipsis_statement",
        2,
    ),
    // mock leakage
    (
        "node",
        "src/service.js",
        "const send = jest.fn();\n",
        "mock_in_source",
        1,
    ),
    (
        "node",
        "src/service.ts",
        "import { x } from './util';\nvi.mock('./util');\n",
        "mock_in_source",
        2,
    ),
    (
        "py",
        "pkg/service.py",
        "from unittest.mock import MagicMock\n",
        "mock_library_in_source",
        1,
    ),
    (
        "rust",
        "src/svc.rs",
        "use mockall::automock;\n",
        "mock_library_in_source",
        1,
    ),
    (
        "py",
        "pkg/service.py",
        "import os\nimport pytest\n",
        "test_utility_in_source",
        2,
    ),
    (
        "node",
        "src/view.js",
        "import { render } from '@testing-library/react';\n",
        "test_utility_in_source",
        1,
    ),
    // type abuse
    (
        "node",
        "src/a.ts",
        "export function f(x: any): number {\n  return 1;\n}\n",
        "explicit_any",
        1,
    ),
    (
        "node",
        "src/a.ts",
        "const u = input as unknown as User;\n",
        "double_cast",
        1,
    ),
    (
        "node",
        "src/a.ts",
        "const d = (shape as Base) as Derived;\n",
        "chained_assertion",
        1,
    ),
    (
        "node",
        "src/a.ts",
        "const d = shape as Base as Derived;\n",
        "chained_assertion",
        1,
    ),
    // naming
    (
        "py",
        "pkg/m.py",
        "def load_data(x):\n    return x\n\n\ndef save_data(x):\n    return x\n\n\ndef parseInput(x):\n    return x\n\n\ndef formatOutput(x):\n    return x\n",
        "mixed_naming",
        9,
    ),
    (
        "py",
        "pkg/m.py",
        "def recieve_message(sock):\n    return sock\n",
        "misspelled_identifier",
        1,
    ),
    (
        "node",
        "src/a.ts",
        "const seperator = ',';\n",
        "misspelled_identifier",
        1,
    ),
    (
        "node",
        "src/a.ts",
        "export function isValid(x: number): string {\n  return 'yes';\n}\n",
        "non_boolean_predicate",
        1,
    ),
    (
        "py",
        "pkg/m.py",
        "def is_ready(job):\n    return \"yes\"\n",
        "non_boolean_predicate",
        1,
    ),
    (
        "rust",
        "src/m.rs",
        "pub fn is_ready(x: u32) -> u32 {\n    x\n}\n",
        "non_boolean_predicate",
        1,
    ),
    // control flow
    (
        "py",
        "pkg/m.py",
        "try:\n    run()\nexcept:\n    pass\n",
        "swallowed_error",
        3,
    ),
    (
        "py",
        "pkg/m.py",
        "try:\n    run()\nexcept Exception as e:\n    pass\n",
        "swallowed_error",
        3,
    ),
    (
        "node",
        "src/a.js",
        "try {\n  run();\n} catch (e) {}\n",
        "swallowed_error",
        3,
    ),
    (
        "node",
        "src/a.js",
        "load().catch(() => {});\n",
        "swallowed_error",
        1,
    ),
    (
        "rust",
        "src/m.rs",
        "fn f(p: &std::path::Path) {\n    let _ = std::fs::remove_file(p);\n}\n",
        "swallowed_error",
        2,
    ),
    (
        "go",
        "internal/store/m.go",
        "package store\n\nfunc F() {\n\terr := G()\n\tif err != nil {}\n}\n",
        "swallowed_error",
        5,
    ),
    (
        "node",
        "src/a.js",
        "function f() {\n  return 1;\n  cleanup();\n}\n",
        "unreachable_code",
        3,
    ),
    (
        "py",
        "pkg/m.py",
        "def f():\n    raise ValueError()\n    print('x')\n",
        "unreachable_code",
        3,
    ),
    (
        "node",
        "src/a.js",
        "while (true) {\n  tick();\n}\n",
        "infinite_loop",
        1,
    ),
    (
        "py",
        "pkg/m.py",
        "def f():\n    while True:\n        tick()\n",
        "infinite_loop",
        2,
    ),
    (
        "rust",
        "src/m.rs",
        "fn f() {\n    loop {\n        tick();\n    }\n}\n",
        "infinite_loop",
        2,
    ),
    (
        "go",
        "internal/store/m.go",
        "package store\n\nfunc F() {\n\tfor {\n\t\ttick()\n\t}\n}\n",
        "infinite_loop",
        4,
    ),
    // resource leaks
    (
        "node",
        "src/a.js",
        "window.addEventListener('resize', onResize);\n",
        "listener_not_removed",
        1,
    ),
    (
        "node",
        "src/a.js",
        "\nsetInterval(poll, 1000);\n",
        "listener_not_removed",
        2,
    ),
    (
        "py",
        "pkg/m.py",
        "def read(p):\n    f = open(p)\n    return f.read()\n",
        "unclosed_resource",
        2,
    ),
    (
        "py",
        "pkg/m.py",
        "def read(p):\n    return open(p).read()\n",
        "unclosed_resource",
        2,
    ),
    (
        "go",
        "internal/store/m.go",
        "package store\n\nimport \"os\"\n\nfunc F() error {\n\tf, err := os.Open(\"x\")\n\tif err != nil {\n\t\treturn err\n\t}\n\t_, err = f.Read(nil)\n\treturn err\n}\n",
        "unclosed_resource",
        6,
    ),
    (
        "node",
        "src/a.js",
        "async function f(p) {\n  const fh = await fs.promises.open(p);\n  return fh.stat();\n}\n",
        "unclosed_resource",
        2,
    ),
    (
        "node",
        "src/a.ts",
        "this.store.changes$.subscribe(v => this.render(v));\n",
        "observable_no_unsubscribe",
        1,
    ),
    // security
    (
        "py",
        "pkg/settings.py",
        "DB_PASSWORD = \"hunter22-prod\"\n",
        "hardcoded_secret",
        1,
    ),
    (
        "node",
        "src/config.js",
        "const config = {\n  apiKey: 'a1b2c3d4e5f6',\n};\n",
        "hardcoded_secret",
        2,
    ),
    (
        "go",
        "internal/store/m.go",
        "package store\n\nvar cfg = Config{Password: \"s3cr3t!\"}\n",
        "hardcoded_secret",
        3,
    ),
    (
        "rust",
        "src/m.rs",
        "const KEY: &str = \"\n-----BEGIN RSA PRIVATE KEY-----\nMIIB\n\";\n",
        "hardcoded_secret",
        2,
    ),
    (
        "py",
        "tests/test_m.py",
        concat!("KEY = 'AKIA", "ABCDEFGHIJKLMNOP'\n"),
        "hardcoded_secret",
        1,
    ),
    (
        "node",
        "src/a.js",
        "console.log('login', user.password);\n",
        "sensitive_logging",
        1,
    ),
    (
        "py",
        "pkg/m.py",
        "print(f\"token={token}\")\n",
        "sensitive_logging",
        1,
    ),
    (
        "rust",
        "src/m.rs",
        "fn f(api_key: &str) {\n    println!(\"{api_key}\");\n}\n",
        "sensitive_logging",
        2,
    ),
    (
        "node",
        "src/a.js",
        "const r = eval(input);\n",
        "dynamic_code_execution",
        1,
    ),
    (
        "node",
        "src/a.js",
        "const f = new Function('a', body);\n",
        "dynamic_code_execution",
        1,
    ),
    (
        "py",
        "pkg/m.py",
        "exec(code)\n",
        "dynamic_code_execution",
        1,
    ),
    // Java, where a check applies
    (
        "py",
        "src/main/java/app/Svc.java",
        "package app;\n\nimport org.mockito.Mockito;\n",
        "mock_library_in_source",
        3,
    ),
    (
        "py",
        "src/main/java/app/Svc.java",
        "class Svc {\n  void run() {\n    try {\n      load();\n    } catch (IOException e) {}\n  }\n}\n",
        "swallowed_error",
        5,
    ),
    (
        "py",
        "src/main/java/app/Svc.java",
        "class Svc {\n  byte[] read(File f) throws IOException {\n    FileInputStream in = new FileInputStream(f);\n    return in.readAllBytes();\n  }\n}\n",
        "unclosed_resource",
        3,
    ),
    (
        "py",
        "src/main/java/app/Svc.java",
        "class Svc {\n  public String isReady() {\n    return \"yes\";\n  }\n}\n",
        "non_boolean_predicate",
        2,
    ),
];

/// (project, file, snippet, check): the snippet must produce no finding of
/// `check` — code that looks like the problem but is not.
const NEAR_MISSES: &[(&str, &str, &str, &str)] = &[
    (
        "py",
        "pkg/new_mod.py",
        "import os\nimport requests\nimport yaml\nimport dateutil.parser\nimport pytest\nimport pytest_asyncio\nfrom pkg import core\nfrom pkg.sub import helpers\nimport ujson\ntry:\n    import orjson\nexcept ImportError:\n    orjson = None\n",
        "undeclared_package",
    ),
    (
        "node",
        "src/a.ts",
        "import fs from 'node:fs';\nimport fsp from 'fs/promises';\nimport fp from 'lodash/fp';\nimport { isUser } from '@app/types';\nimport type { Request } from 'express';\nimport { of } from 'rxjs/operators';\nconst s = 'import x from \"left-pad\"';\n",
        "undeclared_package",
    ),
    (
        "rust",
        "src/extra.rs",
        "use std::collections::HashMap;\nuse crate::parser;\nuse super::x;\nuse serde::Deserialize;\nuse regex::Regex;\nuse libc::c_int;\nuse parser::parse;\nuse scan_rust::total;\nuse tempfile::TempDir;\nuse Ordering::*;\n",
        "undeclared_package",
    ),
    (
        "go",
        "internal/store/extra.go",
        "package store\n\nimport (\n\t\"fmt\"\n\t\"github.com/stretchr/testify/assert\"\n\t\"golang.org/x/sync/errgroup\"\n\t\"example.com/scanapp/internal/store\"\n)\n",
        "undeclared_package",
    ),
    (
        "node",
        "src/a.js",
        "const u = require('./util');\nimport t from './types.js';\nimport lib from './lib';\n",
        "missing_subpath",
    ),
    (
        "py",
        "pkg/new_mod.py",
        "from .core import parse\nfrom . import core\nfrom .sub import helpers\nfrom pkg.sub.helpers import double\n",
        "missing_subpath",
    ),
    (
        "go",
        "internal/store/extra.go",
        "package store\n\nimport \"example.com/scanapp/internal/store\"\n",
        "missing_subpath",
    ),
    (
        "py",
        "pkg/new_mod.py",
        "import numpy\n",
        "near_miss_package",
    ),
    (
        "py",
        "pkg/m.py",
        "# TODO: handle unicode\n# This function implements the parser\n# ---- placeholder code ----\nx = 1\n",
        "placeholder_comment",
    ),
    (
        "py",
        "tests/test_m.py",
        "def test_x():\n    # TODO: implement this\n    assert True\n",
        "placeholder_comment",
    ),
    (
        "py",
        "pkg/m.py",
        "import abc\n\n\nclass Base(abc.ABC):\n    @abc.abstractmethod\n    def run(self):\n        raise NotImplementedError\n\n\nclass MyError(Exception):\n    pass\n\n\nclass Ctx:\n    def __exit__(self, *a):\n        pass\n\n\ndef skip():\n    pass  # deliberately nothing\n",
        "not_implemented_body",
    ),
    (
        "rust",
        "src/m.rs",
        "#[cfg(test)]\nmod tests {\n    fn helper() -> u32 {\n        todo!()\n    }\n}\n",
        "not_implemented_body",
    ),
    (
        "node",
        "src/a.js",
        "function f() {\n  throw new Error('invalid input');\n}\n",
        "not_implemented_body",
    ),
    (
        "py",
        "pkg/m.py",
        "from typing import Protocol, overload\n\n\nclass P(Protocol):\n    def run(self) -> int: ...\n\n\n@overload\ndef g(x: int) -> int: ...\n\n\nclass E(Exception): ...\n",
        "ellipsis_statement",
    ),
    (
        "node",
        "src/service.test.js",
        "const send = jest.fn();\n",
        "mock_in_source",
    ),
    (
        "node",
        "src/service.js",
        "// jest.fn() is used in the tests\nconst s = 'jest.fn()';\n",
        "mock_in_source",
    ),
    (
        "py",
        "tests/test_service.py",
        "from unittest.mock import MagicMock\n",
        "mock_library_in_source",
    ),
    (
        "rust",
        "src/svc.rs",
        "#[cfg(test)]\nmod tests {\n    use mockall::automock;\n}\n",
        "mock_library_in_source",
    ),
    (
        "py",
        "conftest.py",
        "import pytest\n",
        "test_utility_in_source",
    ),
    (
        "node",
        "src/a.ts",
        "// eslint-disable-next-line @typescript-eslint/no-explicit-any\nexport function f(x: any) {}\nconst company = 'any';\nconst anyValue = 1;\n",
        "explicit_any",
    ),
    (
        "node",
        "src/a.js",
        "function f(x) { return x; }\n",
        "explicit_any",
    ),
    (
        "node",
        "src/a.ts",
        "const m = fn as unknown as jest.Mock;\n",
        "double_cast",
    ),
    (
        "node",
        "src/a.ts",
        "const c = [1, 2] as const;\nconst v = f(x as A) as B;\nconst w = x as Foo;\n",
        "chained_assertion",
    ),
    (
        "py",
        "tests/test_m.py",
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        self.x = 1\n\n    def tearDown(self):\n        self.x = 0\n\n    def test_one_thing(self):\n        self.assertEqual(self.x, 1)\n\n    def test_other_thing(self):\n        self.assertEqual(self.x, 1)\n",
        "mixed_naming",
    ),
    (
        "py",
        "pkg/m.py",
        "def receive_message(sock):\n    # recieve is a common typo\n    return \"recieve\"\n",
        "misspelled_identifier",
    ),
    (
        "py",
        "pkg/m.py",
        "def is_ready(job) -> bool:\n    return job.done\n\n\ndef has_items(xs):\n    return len(xs) > 0\n\n\ndef issue(x):\n    return 'x'\n",
        "non_boolean_predicate",
    ),
    (
        "node",
        "src/a.ts",
        "export function isUser(value: unknown): value is User {\n  return value !== null;\n}\n",
        "non_boolean_predicate",
    ),
    (
        "rust",
        "tests/t.rs",
        "#[test]\nfn is_valid_name() {\n    assert!(check(\"x\"));\n}\n",
        "non_boolean_predicate",
    ),
    (
        "py",
        "pkg/m.py",
        "try:\n    run()\nexcept FileNotFoundError:\n    pass\ntry:\n    run()\nexcept Exception:\n    pass  # best effort: the cache is optional\n",
        "swallowed_error",
    ),
    (
        "node",
        "src/a.js",
        "try {\n  run();\n} catch (e) {\n  // optional feature\n}\n",
        "swallowed_error",
    ),
    (
        "rust",
        "src/m.rs",
        "fn f() {\n    let _ = tx.send(1);\n    let _ = writeln!(std::io::stderr(), \"x\");\n}\n",
        "swallowed_error",
    ),
    (
        "node",
        "src/a.js",
        "function f(x) {\n  if (x) return 1;\n  return 2;\n\n  function helper() {}\n}\nfunction g(x) {\n  switch (x) {\n    case 1:\n      return 'a';\n    default:\n      return 'b';\n  }\n}\n",
        "unreachable_code",
    ),
    (
        "rust",
        "src/m.rs",
        "fn f() -> u32 {\n    #[cfg(unix)]\n    return 1;\n    #[cfg(not(unix))]\n    return 2;\n}\n",
        "unreachable_code",
    ),
    (
        "node",
        "src/a.js",
        "while (true) {\n  if (done()) break;\n}\n",
        "infinite_loop",
    ),
    (
        "py",
        "pkg/m.py",
        "def gen():\n    while True:\n        yield 1\n",
        "infinite_loop",
    ),
    (
        "rust",
        "src/m.rs",
        "fn f() -> std::io::Result<()> {\n    loop {\n        let line = read()?;\n    }\n}\n",
        "infinite_loop",
    ),
    (
        "node",
        "src/a.js",
        "window.addEventListener('resize', onResize);\nwindow.removeEventListener('resize', onResize);\nbutton.addEventListener('click', go, { once: true });\nconst h = setInterval(poll, 1000);\nclearInterval(h);\n",
        "listener_not_removed",
    ),
    (
        "py",
        "pkg/m.py",
        "def read(p):\n    with open(p) as f:\n        return f.read()\n\n\ndef keep(p):\n    f = open(p)\n    return f\n",
        "unclosed_resource",
    ),
    (
        "go",
        "internal/store/store.go",
        include_str!("../../fixtures/scan/go/internal/store/store.go"),
        "unclosed_resource",
    ),
    (
        "node",
        "src/a.ts",
        "this.sub = this.store.changes$.subscribe(v => this.render(v));\nthis.store.changes$.pipe(takeUntil(this.destroy$)).subscribe(v => this.render(v));\nthis.http.get(url).subscribe(r => this.data = r);\n",
        "observable_no_unsubscribe",
    ),
    (
        "py",
        "pkg/settings.py",
        "import os\nPASSWORD = os.environ[\"DB_PASSWORD\"]\npassword = \"\"\nPASSWORD_FIELD = \"password\"\nlogin(password=getpass())\nprompt = \"Enter password: \"\nTOKEN_TYPE = \"Bearer\"\nif password == \"hunter22\":\n    pass\n",
        "hardcoded_secret",
    ),
    (
        "py",
        "tests/test_login.py",
        "password = 'hunter22'\n",
        "hardcoded_secret",
    ),
    (
        "node",
        "src/a.js",
        "console.log('password updated');\nconsole.log(password.length);\nconsole.log(tokens);\n",
        "sensitive_logging",
    ),
    (
        "py",
        "tests/test_m.py",
        "print(token)\n",
        "sensitive_logging",
    ),
    (
        "py",
        "pkg/m.py",
        "import ast\nv = ast.literal_eval(s)\nr = redis.eval(script)\nmsg = 'eval(x) is dangerous'\n",
        "dynamic_code_execution",
    ),
    (
        "node",
        "src/a.js",
        "const r = db.eval(q); // eval(x) in a comment\nconst re = /eval\\(/;\n",
        "dynamic_code_execution",
    ),
    (
        "py",
        "src/test/java/app/SvcTest.java",
        "import org.mockito.Mockito;\n",
        "mock_library_in_source",
    ),
    (
        "py",
        "src/main/java/app/Svc.java",
        "class Svc {\n  byte[] read(File f) throws IOException {\n    try (FileInputStream in = new FileInputStream(f)) {\n      return in.readAllBytes();\n    }\n  }\n}\n",
        "unclosed_resource",
    ),
    (
        "py",
        "src/main/java/app/Svc.java",
        "class Svc {\n  public boolean isReady() {\n    return true;\n  }\n}\n",
        "non_boolean_predicate",
    ),
];

#[test]
fn every_check_has_a_trigger_and_a_near_miss() {
    let triggered: BTreeSet<&str> = TRIGGERS.iter().map(|t| t.3).collect();
    let guarded: BTreeSet<&str> = NEAR_MISSES.iter().map(|t| t.3).collect();
    assert_eq!(CHECKS.len(), 24);
    for (_, check, _) in CHECKS {
        assert!(triggered.contains(check), "no trigger case for {check}");
        assert!(guarded.contains(check), "no near-miss case for {check}");
    }
}

#[test]
fn triggers() {
    let mut failures = Vec::new();
    for &(project, rel, text, check, line) in TRIGGERS {
        let (category, _, severity) = CHECKS.iter().find(|c| c.1 == check).expect("known check");
        let found = scan(project, rel, text);
        let hits: Vec<&Finding> = found.iter().filter(|f| f.check == check).collect();
        let ok = hits.len() == 1
            && hits[0].line == Some(line)
            && hits[0].severity == *severity
            && hits[0].category == *category
            && hits[0].file == rel;
        if !ok {
            failures.push(format!(
                "{check} in {project}/{rel} (want line {line}): got {found:#?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn near_misses() {
    let mut failures = Vec::new();
    for &(project, rel, text, check) in NEAR_MISSES {
        let found = scan(project, rel, text);
        let hits: Vec<&Finding> = found.iter().filter(|f| f.check == check).collect();
        if !hits.is_empty() {
            failures.push(format!(
                "{check} must not fire in {project}/{rel}: {hits:#?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn messages_name_the_fix() {
    let f = scan("py", "pkg/m.py", "import reqeusts\n");
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].message,
        "`reqeusts` is not declared in the Python manifest; did you mean `requests`?"
    );
    let f = scan("node", "src/a.js", "import x from './nope';\n");
    assert_eq!(
        f[0].to_string(),
        "src/a.js:1: critical [hallucinated_imports/missing_subpath] `./nope` resolves to no file (tried the extensions and index files)"
    );
}

#[test]
fn no_manifest_means_no_import_verdict() {
    // A Python file in a project without any Python manifest: whether
    // `numpy` is declared cannot be decided, so nothing is reported.
    let f = scan("go", "tool.py", "import numpy\n");
    assert!(
        f.iter().all(|f| f.category != "hallucinated_imports"),
        "{f:#?}"
    );
}

fn all_files(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    out.sort();
    out
}

#[test]
fn sample_projects_have_no_critical_findings() {
    for project in ["rust-calc", "py-calc", "node-calc"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/projects")
            .join(project);
        let found = scan_files(&root, &all_files(&root));
        assert_eq!(counts(&found).critical, 0, "{project}: {found:#?}");
        // the sample projects are small and clean: nothing at all
        assert!(found.is_empty(), "{project}: {found:#?}");
    }
}

#[test]
fn scan_fixtures_are_clean() {
    for project in ["py", "node", "rust", "go"] {
        let root = fixture(project);
        let found = scan_files(&root, &all_files(&root));
        assert!(found.is_empty(), "{project}: {found:#?}");
    }
}

#[test]
fn scan_files_skips_binary_huge_and_missing_files_and_reads_latin1() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join("bin.js"), b"eval(x)\0\0\0").unwrap();
    std::fs::write(root.join("huge.js"), "eval(x);\n".repeat(120_000)).unwrap();
    std::fs::write(root.join("latin1.py"), b"# caf\xe9\nexec(code)\n").unwrap();
    std::fs::write(root.join("notes.txt"), "eval(x)").unwrap();
    let found = scan_files(
        root,
        &[
            "bin.js".to_string(),
            "huge.js".to_string(),
            "latin1.py".to_string(),
            "notes.txt".to_string(),
            "missing.py".to_string(),
        ],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].file, "latin1.py");
    assert_eq!(found[0].line, Some(2));
    assert_eq!(found[0].check, "dynamic_code_execution");
}

#[test]
fn nearest_manifest_wins_in_a_monorepo() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("package.json"),
        r#"{"name":"mono","devDependencies":{"typescript":"5"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("packages/web/src")).unwrap();
    std::fs::write(
        root.join("packages/web/package.json"),
        r#"{"name":"web","dependencies":{"react":"18"}}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("packages/web/src/app.ts"),
        "import React from 'react';\nimport ts from 'typescript';\nimport vue from 'vue';\n",
    )
    .unwrap();
    let found = scan_files(root, &["packages/web/src/app.ts".to_string()]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].check, "undeclared_package");
    assert_eq!(found[0].line, Some(3));
}

#[test]
fn findings_serialise_with_snake_case_severity() {
    let f = scan("py", "pkg/m.py", "exec(code)\n");
    let json = serde_json::to_value(&f[0]).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "category": "security",
            "check": "dynamic_code_execution",
            "severity": "critical",
            "file": "pkg/m.py",
            "line": 1,
            "message": "`exec()` runs a string as code"
        })
    );
}

#[test]
fn docs_list_every_check() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scans.md"))
        .unwrap();
    for (category, check, severity) in CHECKS {
        assert!(
            docs.contains(&format!("`{check}`")),
            "docs/scans.md lacks {check}"
        );
        assert!(
            docs.contains(&format!("`{category}`")),
            "docs/scans.md lacks {category}"
        );
        let row = docs
            .lines()
            .find(|l| l.starts_with('|') && l.contains(&format!("`{check}`")))
            .unwrap_or_else(|| panic!("no table row for {check}"));
        assert!(row.contains(severity.as_str()), "{check}: {row}");
    }
}
