//! Table tests of the test anti-pattern scan (REFERENCE.md "Test
//! anti-patterns (IMPL-001.5)"): for every implemented anti-pattern a test
//! snippet that must trigger it (exact check id, severity and line) and a
//! near-miss that must not. Snippets are scanned as test files of the sample
//! projects under `fixtures/scan/`, whose source files are the subject the
//! coverage checks read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use wfx::project::is_test_path;
use wfx::scan::antipatterns::{scan_test_file, scan_test_files};
use wfx::scan::findings::{Finding, Severity, counts};

use Severity::{Critical, Error, Warning};

fn fixture(project: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/scan")
        .join(project)
}

fn scan(project: &str, rel: &str, text: &str) -> Vec<Finding> {
    scan_test_file(&fixture(project), rel, text)
}

/// (category, check, severity) of every implemented anti-pattern.
/// `order_dependence` is documented as not checked (docs/scans.md).
const CHECKS: &[(&str, &str, Severity)] = &[
    ("empty_tests", "no_assertion", Critical),
    ("empty_tests", "setup_only", Error),
    ("empty_tests", "skipped_without_reason", Warning),
    ("empty_tests", "commented_out_test", Warning),
    ("empty_tests", "only_left_in", Critical),
    ("weak_assertions", "weak_assertion", Warning),
    ("weak_assertions", "snapshot_only", Warning),
    ("isolation", "shared_mutable_state", Error),
    ("isolation", "missing_cleanup", Warning),
    ("incomplete_coverage", "no_negative_path_test", Error),
    ("incomplete_coverage", "no_edge_case_test", Error),
    ("incomplete_coverage", "async_without_async_test", Warning),
    ("ai_generated", "tautology", Critical),
    ("ai_generated", "asserts_only_on_mocks", Error),
    ("ai_generated", "copy_pasted_bodies", Warning),
    ("ai_generated", "subject_not_used", Critical),
];

const PY: &str = "tests/test_x.py";
const JS: &str = "test/x.test.js";
const RS: &str = "tests/x.rs";
const GO: &str = "internal/store/x_test.go";
const JAVA: &str = "src/test/java/app/SvcTest.java";

/// (project, file, snippet, check, line): exactly one finding of `check`, at
/// `line`, with the check's severity.
const TRIGGERS: &[(&str, &str, &str, &str, u32)] = &[
    // empty tests
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_parse():\n    parse(\"1\")\n",
        "no_assertion",
        4,
    ),
    (
        "py",
        PY,
        "def test_nothing():\n    pass\n",
        "no_assertion",
        1,
    ),
    (
        "node",
        JS,
        "const { clamp } = require('../src/util');\n\nit('clamps', () => {\n  clamp(1, 0, 2);\n});\n",
        "no_assertion",
        3,
    ),
    (
        "rust",
        RS,
        "use scan_rust::parse;\n\n#[test]\nfn parses() {\n    parse(\"1\").ok();\n}\n",
        "no_assertion",
        4,
    ),
    (
        "go",
        GO,
        "package store\n\nimport \"testing\"\n\nfunc TestLoad(t *testing.T) {\n\tLoad(\"x\")\n}\n",
        "no_assertion",
        5,
    ),
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_setup():\n    data = [1, 2]\n    name = \"x\"\n",
        "setup_only",
        4,
    ),
    (
        "node",
        JS,
        "const { Service } = require('../src/util');\n\nit('builds', () => {\n  const svc = new Service();\n  const spy = jest.fn();\n});\n",
        "setup_only",
        3,
    ),
    (
        "py",
        PY,
        "import pytest\nfrom pkg.core import parse\n\n\n@pytest.mark.skip\ndef test_x():\n    assert parse(\"1\") == 1\n",
        "skipped_without_reason",
        6,
    ),
    (
        "node",
        JS,
        "const { clamp } = require('../src/util');\n\nit.skip('later', () => {\n  expect(clamp(1, 0, 2)).toBe(1);\n});\n",
        "skipped_without_reason",
        3,
    ),
    (
        "node",
        JS,
        "describe.skip('group', () => {\n  it('a', () => {\n    expect(1 + 1).toBe(2);\n  });\n});\n",
        "skipped_without_reason",
        1,
    ),
    (
        "rust",
        RS,
        "use scan_rust::total;\n\n#[test]\n#[ignore]\nfn slow() {\n    assert_eq!(total(&[1]), 1);\n}\n",
        "skipped_without_reason",
        5,
    ),
    (
        "go",
        GO,
        "package store\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {\n\tt.Skip()\n\tLoad(\"\")\n}\n",
        "skipped_without_reason",
        5,
    ),
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_parse():\n    assert parse(\"1\") == 1\n\n# def test_old():\n#     assert parse(\"2\") == 2\n",
        "commented_out_test",
        7,
    ),
    (
        "node",
        JS,
        "// it('old', () => {\n//   expect(x).toBe(1);\n// });\n",
        "commented_out_test",
        1,
    ),
    (
        "node",
        JS,
        "const { clamp } = require('../src/util');\n\nit.only('focus', () => {\n  expect(clamp(1, 0, 2)).toBe(1);\n});\n",
        "only_left_in",
        3,
    ),
    ("node", JS, "fdescribe('x', () => {});\n", "only_left_in", 1),
    // weak assertions
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_parse():\n    result = parse(\"1\")\n    assert result\n",
        "weak_assertion",
        4,
    ),
    (
        "node",
        JS,
        "const { clamp } = require('../src/util');\n\nit('clamps', () => {\n  expect(clamp(1, 0, 2)).toBeDefined();\n});\n",
        "weak_assertion",
        3,
    ),
    (
        "rust",
        RS,
        "use scan_rust::parse;\n\n#[test]\nfn parses() {\n    assert!(parse(\"1\").is_ok());\n}\n",
        "weak_assertion",
        4,
    ),
    (
        "node",
        JS,
        "const { total } = require('../src/util');\n\nit('renders', () => {\n  expect(total([1])).toMatchSnapshot();\n});\n",
        "snapshot_only",
        3,
    ),
    (
        "rust",
        RS,
        "use scan_rust::total;\n\n#[test]\nfn snap() {\n    insta::assert_snapshot!(total(&[1]).to_string());\n}\n",
        "snapshot_only",
        4,
    ),
    // isolation
    (
        "py",
        PY,
        "from pkg.core import add\n\nCALLS = []\n\n\ndef test_a():\n    CALLS.append(add(1, 2))\n    assert len(CALLS) == 1\n",
        "shared_mutable_state",
        7,
    ),
    (
        "node",
        JS,
        "const { total } = require('../src/util');\n\nlet count = 0;\n\nit('a', () => {\n  count += 1;\n  expect(total([count])).toBe(1);\n});\n",
        "shared_mutable_state",
        6,
    ),
    (
        "go",
        GO,
        "package store\n\nimport \"testing\"\n\nvar hits int\n\nfunc TestA(t *testing.T) {\n\thits++\n\tif _, err := Load(\"\"); err == nil || hits != 1 {\n\t\tt.Fatal(hits)\n\t}\n}\n",
        "shared_mutable_state",
        8,
    ),
    (
        "rust",
        RS,
        "use scan_rust::total;\n\nstatic mut SEEN: u32 = 0;\n\n#[test]\nfn a() {\n    unsafe { SEEN += 1; }\n    assert_eq!(total(&[1]), 1);\n}\n",
        "shared_mutable_state",
        7,
    ),
    (
        "py",
        PY,
        "import tempfile\nfrom pkg.core import parse\n\n\ndef test_a():\n    d = tempfile.mkdtemp()\n    assert parse(\"1\") == 1\n",
        "missing_cleanup",
        6,
    ),
    (
        "go",
        GO,
        "package store\n\nimport (\n\t\"net/http/httptest\"\n\t\"testing\"\n)\n\nfunc TestA(t *testing.T) {\n\tsrv := httptest.NewServer(nil)\n\tif _, err := Load(srv.URL); err == nil {\n\t\tt.Fatal()\n\t}\n}\n",
        "missing_cleanup",
        9,
    ),
    (
        "node",
        JS,
        "const { load } = require('../src/util');\n\nit('serves', async () => {\n  const server = app.listen(0);\n  expect(await load(1)).toEqual({ id: 1 });\n});\n",
        "missing_cleanup",
        4,
    ),
    // incomplete coverage
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_parse():\n    assert parse(\"1\") == 1\n",
        "no_negative_path_test",
        4,
    ),
    (
        "node",
        JS,
        "const { clamp } = require('../src/util');\n\nit('clamps', () => {\n  expect(clamp(5, 0, 10)).toBe(5);\n});\n",
        "no_negative_path_test",
        3,
    ),
    (
        "rust",
        RS,
        "use scan_rust::parse;\n\n#[test]\nfn parses() {\n    assert_eq!(parse(\"12\"), Ok(12));\n}\n",
        "no_negative_path_test",
        4,
    ),
    (
        "go",
        GO,
        "package store\n\nimport \"testing\"\n\nfunc TestLoad(t *testing.T) {\n\tb, _ := Load(\"x\")\n\tif len(b) != 1 {\n\t\tt.Errorf(\"got %d\", len(b))\n\t}\n}\n",
        "no_negative_path_test",
        5,
    ),
    (
        "py",
        PY,
        "from pkg.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        "no_edge_case_test",
        4,
    ),
    (
        "node",
        JS,
        "const { total } = require('../src/util');\n\ntest('sums', () => {\n  expect(total([1, 2])).toBe(3);\n});\n",
        "no_edge_case_test",
        3,
    ),
    (
        "py",
        PY,
        "from pkg.core import fetch\n\n\ndef test_fetch():\n    assert fetch(\"\") is not None\n",
        "async_without_async_test",
        4,
    ),
    (
        "node",
        JS,
        "const { load } = require('../src/util');\n\nit('loads', () => {\n  expect(load(0)).toBeTruthy();\n});\n",
        "async_without_async_test",
        3,
    ),
    // AI-generated
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_x():\n    parse(\"1\")\n    assert True\n",
        "tautology",
        6,
    ),
    (
        "node",
        JS,
        "const { clamp } = require('../src/util');\n\nit('x', () => {\n  clamp(1, 0, 2);\n  expect(1).toBe(1);\n});\n",
        "tautology",
        5,
    ),
    (
        "rust",
        RS,
        "use scan_rust::total;\n\n#[test]\nfn t() {\n    let x = total(&[1]);\n    assert_eq!(x, x);\n}\n",
        "tautology",
        6,
    ),
    (
        "go",
        GO,
        "package store\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n)\n\nfunc TestX(t *testing.T) {\n\tb, _ := Load(\"\")\n\tassert.Equal(t, b, b)\n}\n",
        "tautology",
        11,
    ),
    (
        "py",
        PY,
        "from unittest.mock import MagicMock\n\nfrom pkg.core import add\n\n\ndef test_x():\n    m = MagicMock()\n    add(m, 0)\n    m.assert_called_once()\n",
        "asserts_only_on_mocks",
        6,
    ),
    (
        "node",
        JS,
        "const { load } = require('../src/util');\n\nit('calls back', () => {\n  const cb = jest.fn();\n  load(0).then(cb);\n  expect(cb).toHaveBeenCalled();\n});\n",
        "asserts_only_on_mocks",
        3,
    ),
    (
        "py",
        PY,
        "from pkg.core import add, parse\n\n\ndef test_a():\n    assert parse(\"12\") == 12 and add(0, 2) == 2\n\n\ndef test_b():\n    assert parse(\"12\") == 12 and add(0, 2) == 2\n",
        "copy_pasted_bodies",
        8,
    ),
    (
        "py",
        PY,
        "import json\n\n\ndef test_json():\n    assert json.loads(\"1\") == 1\n",
        "subject_not_used",
        4,
    ),
    (
        "node",
        JS,
        "test('math', () => {\n  expect(Math.max(1, 2)).toBe(2);\n});\n",
        "subject_not_used",
        1,
    ),
    (
        "rust",
        RS,
        "#[test]\nfn t() {\n    assert_eq!(1 + 1, 2);\n}\n",
        "subject_not_used",
        2,
    ),
    (
        "go",
        GO,
        "package store_test\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {\n\tif 1+1 != 2 {\n\t\tt.Fatal()\n\t}\n}\n",
        "subject_not_used",
        5,
    ),
    // Java (JUnit)
    (
        "py",
        JAVA,
        "class SvcTest {\n  @Test\n  void runs() {\n    new Svc().run();\n    assertTrue(true);\n  }\n}\n",
        "tautology",
        5,
    ),
    (
        "py",
        JAVA,
        "class SvcTest {\n  @Test\n  void runs() {\n    new Svc().run();\n  }\n}\n",
        "no_assertion",
        3,
    ),
    (
        "py",
        JAVA,
        "class SvcTest {\n  @Disabled\n  @Test\n  void runs() {\n    assertEquals(2, new Svc().two());\n  }\n}\n",
        "skipped_without_reason",
        4,
    ),
    (
        "py",
        JAVA,
        "class SvcTest {\n  @Test\n  void runs() {\n    assertNotNull(new Svc().two());\n  }\n}\n",
        "weak_assertion",
        3,
    ),
];

/// (project, file, snippet, check): no finding of `check`.
const NEAR_MISSES: &[(&str, &str, &str, &str)] = &[
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef check(v):\n    assert v == 1\n\n\ndef test_parse():\n    check(parse(\"1\"))\n",
        "no_assertion",
    ),
    (
        "py",
        PY,
        "import pytest\nfrom pkg.core import parse\n\n\ndef test_parse():\n    with pytest.raises(ValueError):\n        parse(\"\")\n",
        "no_assertion",
    ),
    (
        "py",
        PY,
        "import pytest\n\n\n@pytest.mark.skip(reason=\"later\")\ndef test_x():\n    pass\n",
        "no_assertion",
    ),
    (
        "rust",
        RS,
        "use scan_rust::parse;\n\n#[test]\n#[should_panic]\nfn panics() {\n    parse(\"x\").unwrap();\n}\n",
        "no_assertion",
    ),
    (
        "rust",
        RS,
        "#[test]\nfn send() {\n    fn assert_send<T: Send>() {}\n    assert_send::<scan_rust::Error>();\n}\n",
        "no_assertion",
    ),
    (
        "go",
        GO,
        "package store\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {\n\tassertLoads(t, \"x\")\n}\n",
        "no_assertion",
    ),
    (
        "node",
        JS,
        "const app = require('../src/app');\n\nit('serves', async () => {\n  await request(app).get('/').expect(200);\n});\n",
        "no_assertion",
    ),
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_x():\n    data = \"1\"\n    parse(data)\n",
        "setup_only",
    ),
    (
        "py",
        PY,
        "import sys\n\nimport pytest\nfrom pkg.core import parse\n\n\n@pytest.mark.skip(reason=\"flaky on CI\")\ndef test_a():\n    assert parse(\"1\") == 1\n\n\n@pytest.mark.skipif(sys.platform == \"win32\", reason=\"posix only\")\ndef test_b():\n    assert parse(\"1\") == 1\n\n\n@skip_without_network\ndef test_c():\n    assert parse(\"1\") == 1\n",
        "skipped_without_reason",
    ),
    (
        "node",
        JS,
        "// waiting for the upstream fix (#123)\nit.skip('later', () => {\n  expect(1 + 1).toBe(2);\n});\n",
        "skipped_without_reason",
    ),
    (
        "rust",
        RS,
        "#[test]\n#[ignore = \"slow\"]\nfn slow() {\n    assert_eq!(scan_rust::total(&[1]), 1);\n}\n",
        "skipped_without_reason",
    ),
    (
        "go",
        GO,
        "package store\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {\n\tt.Skip(\"needs network\")\n}\n",
        "skipped_without_reason",
    ),
    (
        "py",
        PY,
        "# the test below checks the parser\nfrom pkg.core import parse\n\n\ndef test_parse():\n    assert parse(\"1\") == 1\n",
        "commented_out_test",
    ),
    (
        "rust",
        RS,
        "/// ```\n/// #[test]\n/// fn example() {}\n/// ```\n#[test]\nfn t() {\n    assert_eq!(scan_rust::total(&[0]), 0);\n}\n",
        "commented_out_test",
    ),
    (
        "node",
        JS,
        "// it.only( in a comment\nconst only = 'it.only(';\nit('runs', () => {\n  expect(only).toBe('it.only(');\n});\n",
        "only_left_in",
    ),
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_parse():\n    result = parse(\"1\")\n    assert result\n    assert result == 1\n",
        "weak_assertion",
    ),
    (
        "node",
        JS,
        "const { clamp } = require('../src/util');\n\nit('clamps', () => {\n  expect(clamp(1, 0, 2)).toBe(1);\n});\n",
        "weak_assertion",
    ),
    (
        "node",
        JS,
        "it('renders', () => {\n  const out = render();\n  expect(out).toMatchSnapshot();\n  expect(out.length).toBe(1);\n});\n",
        "snapshot_only",
    ),
    (
        "node",
        JS,
        "const { total } = require('../src/util');\n\nlet items;\n\nbeforeEach(() => {\n  items = [];\n});\n\nit('a', () => {\n  items.push(1);\n  expect(total(items)).toBe(1);\n});\n",
        "shared_mutable_state",
    ),
    (
        "py",
        PY,
        "from pkg.core import add\n\nCALLS = []\n\n\ndef test_a():\n    CALLS = []\n    CALLS.append(add(1, 2))\n    assert CALLS == [3]\n",
        "shared_mutable_state",
    ),
    (
        "go",
        GO,
        "package store\n\nimport \"testing\"\n\nvar root = \"/\"\n\nfunc TestA(t *testing.T) {\n\told := root\n\troot = t.TempDir()\n\tt.Cleanup(func() { root = old })\n\tif _, err := Load(root); err == nil {\n\t\tt.Fatal()\n\t}\n}\n",
        "shared_mutable_state",
    ),
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_a(tmp_path):\n    (tmp_path / \"x\").write_text(\"1\")\n    assert parse((tmp_path / \"x\").read_text()) == 1\n",
        "missing_cleanup",
    ),
    (
        "py",
        PY,
        "import shutil\nimport tempfile\nfrom pkg.core import parse\n\n\ndef test_a():\n    d = tempfile.mkdtemp()\n    try:\n        assert parse(\"1\") == 1\n    finally:\n        shutil.rmtree(d)\n",
        "missing_cleanup",
    ),
    (
        "go",
        GO,
        "package store\n\nimport (\n\t\"net/http/httptest\"\n\t\"testing\"\n)\n\nfunc TestA(t *testing.T) {\n\tsrv := httptest.NewServer(nil)\n\tdefer srv.Close()\n\tif _, err := Load(srv.URL); err == nil {\n\t\tt.Fatal()\n\t}\n}\n",
        "missing_cleanup",
    ),
    (
        "py",
        PY,
        "import pytest\nfrom pkg.core import parse\n\n\ndef test_parse():\n    assert parse(\"1\") == 1\n\n\ndef test_parse_rejects_empty():\n    with pytest.raises(ValueError):\n        parse(\"\")\n",
        "no_negative_path_test",
    ),
    (
        "py",
        PY,
        "from pkg.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        "no_negative_path_test",
    ),
    (
        "py",
        PY,
        "from pkg.core import add\n\n\ndef test_add():\n    assert add(0, 3) == 3\n",
        "no_edge_case_test",
    ),
    (
        "py",
        PY,
        "from pkg.core import add\n\n\ndef test_add_handles_negative_numbers():\n    assert add(2, 3) == 5\n",
        "no_edge_case_test",
    ),
    (
        "node",
        JS,
        "const { total } = require('../src/util');\n\ntest('sums', () => {\n  expect(total([])).toBe(0);\n});\n",
        "no_edge_case_test",
    ),
    (
        "py",
        PY,
        "import pytest\n\nfrom pkg.core import fetch\n\n\n@pytest.mark.asyncio\nasync def test_fetch():\n    assert await fetch(\"\") is not None\n",
        "async_without_async_test",
    ),
    (
        "node",
        JS,
        "const { load } = require('../src/util');\n\nit('loads', async () => {\n  expect(await load(0)).toEqual({ id: 0 });\n});\n",
        "async_without_async_test",
    ),
    (
        "py",
        PY,
        "from pkg.core import parse\n\n\ndef test_x():\n    assert parse(\"1\") == parse(\"1\")\n    assert parse(\"1\") == 1\n",
        "tautology",
    ),
    (
        "rust",
        RS,
        "#[test]\nfn partial_eq_is_reflexive() {\n    let x = scan_rust::total(&[1]);\n    assert_eq!(x, x);\n}\n",
        "tautology",
    ),
    (
        "py",
        PY,
        "from unittest.mock import MagicMock\n\nfrom pkg.core import add\n\n\ndef test_x():\n    m = MagicMock()\n    assert add(1, 2) == 3\n    m.assert_not_called()\n",
        "asserts_only_on_mocks",
    ),
    (
        "py",
        PY,
        "from pkg.core import add, parse\n\n\ndef test_a():\n    assert parse(\"12\") == 12 and add(0, 2) == 2\n\n\ndef test_b():\n    assert parse(\"13\") == 13 and add(0, 2) == 2\n",
        "copy_pasted_bodies",
    ),
    (
        "py",
        PY,
        "def test_home(client):\n    assert client.get(\"/\").status_code == 200\n",
        "subject_not_used",
    ),
    (
        "node",
        "e2e/home.spec.ts",
        "import { test, expect } from '@playwright/test';\n\ntest('home', async ({ page }) => {\n  await page.goto('/');\n  await expect(page).toHaveTitle(/Home/);\n});\n",
        "subject_not_used",
    ),
    (
        "go",
        GO,
        "package store_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/scanapp/internal/store\"\n)\n\nfunc TestX(t *testing.T) {\n\tif _, err := store.Load(\"\"); err == nil {\n\t\tt.Fatal()\n\t}\n}\n",
        "subject_not_used",
    ),
    (
        "rust",
        "src/lib2.rs",
        "pub fn two() -> u32 {\n    2\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn t() {\n        assert_eq!(two(), 2);\n    }\n}\n",
        "subject_not_used",
    ),
    (
        "py",
        JAVA,
        "class SvcTest {\n  @Disabled(\"flaky on CI\")\n  @Test\n  void runs() {\n    assertEquals(2, new Svc().two());\n  }\n}\n",
        "skipped_without_reason",
    ),
    (
        "py",
        JAVA,
        "class SvcTest {\n  @Test\n  void runs() {\n    assertEquals(2, new Svc().two());\n  }\n}\n",
        "tautology",
    ),
];

#[test]
fn every_check_has_a_trigger_and_a_near_miss() {
    let triggered: BTreeSet<&str> = TRIGGERS.iter().map(|t| t.3).collect();
    let guarded: BTreeSet<&str> = NEAR_MISSES.iter().map(|t| t.3).collect();
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
fn a_file_without_tests_yields_nothing() {
    let found = scan(
        "py",
        "pkg/core.py",
        include_str!("../../fixtures/scan/py/pkg/core.py"),
    );
    assert!(found.is_empty(), "{found:#?}");
}

fn test_files(root: &Path) -> Vec<String> {
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
        .filter(|p| is_test_path(p) || p.ends_with(".rs"))
        .collect();
    out.sort();
    out
}

#[test]
fn scan_fixtures_are_clean() {
    for project in ["py", "node", "rust", "go"] {
        let root = fixture(project);
        let found = scan_test_files(&root, &test_files(&root));
        assert!(found.is_empty(), "{project}: {found:#?}");
    }
}

/// The sample projects' tests: no critical finding, and exactly these
/// informational ones (functions tested without edge or negative cases, the
/// skipped bigint test).
#[test]
fn sample_projects_have_no_critical_findings() {
    let mut all = Vec::new();
    for project in ["rust-calc", "py-calc", "node-calc"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/projects")
            .join(project);
        let found = scan_test_files(&root, &test_files(&root));
        assert_eq!(counts(&found).critical, 0, "{project}: {found:#?}");
        all.extend(
            found
                .into_iter()
                .map(|f| format!("{project}/{}:{} {}", f.file, f.line.unwrap_or(0), f.check)),
        );
    }
    let want = [
        "rust-calc/src/lib.rs:36 no_edge_case_test",
        "rust-calc/src/stats.rs:32 no_negative_path_test",
        "rust-calc/tests/integration.rs:4 no_edge_case_test",
        "rust-calc/tests/integration.rs:11 no_edge_case_test",
        "rust-calc/tests/integration.rs:11 no_negative_path_test",
        "rust-calc/tests/integration.rs:16 no_negative_path_test",
        "py-calc/tests/test_auth.py:4 no_edge_case_test",
        "py-calc/tests/test_auth.py:16 no_edge_case_test",
        "py-calc/tests/test_ops.py:6 no_edge_case_test",
        "py-calc/tests/test_ops.py:18 no_edge_case_test",
        "py-calc/tests/test_ops.py:23 no_edge_case_test",
        "node-calc/test/math.test.js:8 no_edge_case_test",
        "node-calc/test/math.test.js:20 skipped_without_reason",
        "node-calc/test/strings.test.js:23 no_edge_case_test",
    ];
    assert_eq!(all, want);
}

#[test]
fn findings_are_sorted_by_line_and_carry_the_file() {
    let text = "const { clamp } = require('../src/util');\n\nit.only('a', () => {\n  expect(1).toBe(1);\n});\n";
    let found = scan("node", JS, text);
    let lines: Vec<(u32, &str)> = found
        .iter()
        .map(|f| (f.line.unwrap(), f.check.as_str()))
        .collect();
    assert_eq!(
        lines,
        vec![(3, "only_left_in"), (4, "tautology")],
        "{found:#?}"
    );
    assert!(found.iter().all(|f| f.file == JS));
}

#[test]
fn docs_list_every_check() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scans.md"))
        .unwrap();
    for (category, check, severity) in CHECKS {
        let row = docs
            .lines()
            .find(|l| l.starts_with('|') && l.contains(&format!("`{check}`")))
            .unwrap_or_else(|| panic!("no table row for {check}"));
        assert!(row.contains(severity.as_str()), "{check}: {row}");
        assert!(
            docs.contains(&format!("`{category}`")),
            "docs/scans.md lacks {category}"
        );
    }
    assert!(
        docs.contains("**not checked**"),
        "order dependence must be listed as not checked"
    );
}

/// Every prefix of awkward inputs (unterminated strings and comments,
/// escapes before multi-byte characters, nested interpolations, CRLF) must
/// scan without a panic in both scans.
#[test]
fn no_panic_on_truncated_or_odd_input() {
    let samples: &[(&str, &str)] = &[
        (
            "tests/test_x.py",
            "# é\ndef test_a(x=\"\\é\"):\n    s = f\"{d['k']}{{é}}\"\n    '''doc ü\n    assert s == r\"\\\"\" ; pass\r\n@pytest.mark.skip(\"ß\")\ndef test_b(): ...\n",
        ),
        (
            "test/x.test.js",
            "it('é', async () => {\n  const r = /[\"'é]+/g; const t = `a ${`b ${c}`} é`;\n  expect(r.test('ü')).toBe(true) /* ünterminated",
        ),
        (
            "tests/x.rs",
            "#[test]\nfn t<'a>() { let c = 'é'; let s = r#\"é\"#; /* /* é */ */ assert_eq!(c, '\\u{e9}'); b'\\''; }\n#[cfg(test)] mod m { fn f() -> Vec<[u8; 4]> { todo!() } }",
        ),
        (
            "internal/store/x_test.go",
            "package store\nimport (\n\t\"testing\"\n)\nfunc TestX(t *testing.T) {\n\ts := `é\n`; r := '\\''; _ = 'é'\n\tt.Skip(\"ü\")\n}\n",
        ),
        (
            "src/test/java/AppTest.java",
            "class AppTest {\n  @Test void t() { String s = \"\"\"\n é \"\"\"; char c = 'é'; assertTrue(true); }\n}\n",
        ),
    ];
    for &(rel, text) in samples {
        let project = if rel.ends_with(".rs") {
            "rust"
        } else if rel.ends_with(".go") {
            "go"
        } else if rel.ends_with(".js") {
            "node"
        } else {
            "py"
        };
        let root = fixture(project);
        let manifest = wfx::scan::ai_issues::load_manifest(&root);
        for (i, _) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            let prefix = &text[..i];
            let _ = scan_test_file(&root, rel, prefix);
            let _ = wfx::scan::ai_issues::scan_file(&root, rel, prefix, &manifest);
            let src_rel = rel.replace("tests/", "src/").replace("test/", "src/");
            let _ = wfx::scan::ai_issues::scan_file(&root, &src_rel, prefix, &manifest);
        }
    }
}
